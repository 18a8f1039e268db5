"""How the tokenizer-free estimate (`llm.spending.estimated_tokens`) compares with real
tokenizers, in several scripts: the table docs/cost.md shows.

The tokenizers are llama.cpp's vocabulary-only GGUF files (`models/ggml-vocab-*.gguf` in its
source, also inside llama-cpp-python's sdist), read by llama-cpp-python; neither is a
dependency of the agent, and nothing is downloaded.

    python -m benchmarks.tokens path/to/llama.cpp/models
    python -m benchmarks.tokens path/to/llama.cpp/models --json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from deep_research.llm.spending import estimated_tokens

# The same few sentences (heat pumps in the cold), written for this table, and the shapes a
# research run sends most: Markdown with links, a tool call's JSON, code.
SAMPLES = {
    "English": "Heat pumps move warmth from outside air into a house even when it is cold, "
    "and the best ones keep working well below freezing. Their running cost depends on the "
    "price of electricity and on how well the building is insulated.",
    "Chinese": "热泵即使在寒冷的天气里也能把室外空气中的热量送进房子里，最好的产品在零度以下仍然"
    "能正常工作。它们的运行成本取决于电价以及建筑物的保温情况。",
    "Japanese": "ヒートポンプは寒い日でも外気の熱を家の中に運ぶことができ、優れた製品は氷点下でも"
    "十分に動きます。運転費用は電気料金と建物の断熱性能によって決まります。",
    "Korean": "히트펌프는 추운 날에도 바깥 공기의 열을 집 안으로 옮길 수 있으며, 좋은 제품은 "
    "영하에서도 잘 작동합니다. 운영 비용은 전기 요금과 건물의 단열 상태에 따라 달라집니다.",
    "Russian": "Тепловые насосы переносят тепло из наружного воздуха в дом даже в холод, а "
    "лучшие из них хорошо работают и при морозе. Их стоимость эксплуатации зависит от цены "
    "электричества и от утепления здания.",
    "Greek": "Οι αντλίες θερμότητας μεταφέρουν θερμότητα από τον εξωτερικό αέρα στο σπίτι "
    "ακόμη και στο κρύο, και οι καλύτερες λειτουργούν καλά κάτω από το μηδέν.",
    "Arabic": "تنقل المضخات الحرارية الدفء من الهواء الخارجي إلى المنزل حتى في البرد، وأفضلها "
    "يعمل جيدا تحت درجة التجمد. وتعتمد تكلفة تشغيلها على سعر الكهرباء وعزل المبنى.",
    "Hindi": "हीट पंप ठंड में भी बाहर की हवा से गर्मी घर के अंदर ले आते हैं, और अच्छे पंप शून्य से "
    "नीचे भी ठीक से काम करते हैं। उनकी लागत बिजली की कीमत पर निर्भर करती है।",
    "emoji": "🔥🏠❄️🌡️💡🔌🌍🚀😀👍🎉🧊🌞🌧️⚡🏭",
    "JSON, URL": '{"query": "heat pump efficiency 2024", '
    '"url": "https://example.org/reports/heat-pumps?id=42&lang=en"}',
    "Markdown": "Air-source heat pumps cut heating bills by 30-50% in mild climates "
    "([DOE, 2023](https://www.energy.gov/energysaver/heat-pump-systems#:~:text=air-source)); "
    "in very cold regions, output drops below -15 °C [2](https://example.com/cold-climate-study.pdf).",
    "code": "def admit(self, price: Price, prompt_tokens: int) -> None:\n"
    "    if self.limit is None:\n        return\n"
    "    worst = price.micros(prompt_tokens, 0)\n    assert worst is not None\n",
    # Figures and hashes: tokenizers that split every digit count these highest.
    "figures": "2019 2020 2021 2022 2023 | 1,284 1,397 1,512 1,640 1,733 | 3.2 3.4 3.1 2.9 "
    "3.6 | 48213 51877 55140 60231 64982 | 0.27 0.31 0.35 0.38 0.41 | 17.5% 18.2% 19.9%",
    "hash": "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
}
# Tokenizers of models with a price (or their close kin) first; old ones after.
VOCABS = ("llama-bpe", "qwen35", "gemma-4", "command-r", "deepseek-llm", "llama-spm", "gpt-2")


def counts(models: Path) -> dict[str, dict[str, int]]:
    """Each sample's token count under each vocabulary found in `models`."""
    try:
        import llama_cpp
    except ImportError:
        sys.exit("needs llama-cpp-python (pip install llama-cpp-python), to read the GGUF files")
    out: dict[str, dict[str, int]] = {}
    for name in VOCABS:
        path = models / f"ggml-vocab-{name}.gguf"
        if not path.is_file():
            continue
        vocab = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        out[name] = {
            label: len(vocab.tokenize(text.encode(), add_bos=False))
            for label, text in SAMPLES.items()
        }
    return out


def table(measured: dict[str, dict[str, int]]) -> str:
    names = list(measured)
    lines = [
        "| text | chars | " + " | ".join(names) + " | chars ÷ 4 (before) | estimate |",
        "|" + "---|" * (len(names) + 4),
    ]
    for label, text in SAMPLES.items():
        real = " | ".join(str(measured[name][label]) for name in names)
        before = math.ceil(len(text) / 4)
        lines.append(f"| {label} | {len(text)} | {real} | {before} | {estimated_tokens(text)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, help="llama.cpp's models/ folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    measured = counts(args.models)
    if not measured:
        sys.exit(f"no ggml-vocab-*.gguf of {', '.join(VOCABS)} in {args.models}")
    if args.json:
        estimates = {label: estimated_tokens(text) for label, text in SAMPLES.items()}
        print(json.dumps({"tokenizers": measured, "estimate": estimates}))
    else:
        print(table(measured))


if __name__ == "__main__":
    main()

"""`text.topics`: a topic from an item, and one normalisation for "the same item"."""

from __future__ import annotations

from deep_research.text.topics import TOPIC_CHARS, as_topic, distinct, topic_key


def test_an_item_and_the_topic_made_from_it_have_one_key() -> None:
    long_item = "Heat  pump\ncosts " + "word " * 200
    topic = as_topic(long_item)
    assert len(topic) <= TOPIC_CHARS and "\n" not in topic and topic.endswith("word")
    assert topic_key(topic) == topic_key(long_item) == topic_key(long_item.upper())
    assert topic_key("Heat pump costs") != topic_key("Heat pump costs in 2025")


def test_distinct_keeps_the_first_spelling_of_each_item() -> None:
    assert distinct(["Costs", " costs ", "COSTS", "Noise", "noise\t"]) == ["Costs", "Noise"]
    assert distinct([]) == []

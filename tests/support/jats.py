"""A JATS article as Europe PMC's fullTextXML serves one: its DOCTYPE naming JATS's DTD,
a processing instruction, front matter, body and back."""

from __future__ import annotations

from xml.sax.saxutils import escape

Section = tuple[str, list[str]]


def article_xml(title: str, abstract: str, sections: list[Section], body_extra: str = "") -> bytes:
    """The article, with the clutter a real one has around its prose: a table, a figure,
    a formula, citation links and a reference list."""
    body = "".join(
        f"<sec id='s{n}'><label>{n}.</label><title>{escape(heading)}</title>"
        + "".join(f"<p>{escape(p)} <xref ref-type='bibr' rid='r1'>[1]</xref></p>" for p in ps)
        + "<table-wrap><label>Table 1</label><table><tr><td>TABLE CELL</td></tr></table>"
        "</table-wrap>" + "</sec>"
        for n, (heading, ps) in enumerate(sections, 1)
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD with \
MathML3 v1.3 20210610//EN" "JATS-archivearticle1-3-mathml3.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:mml="http://www.w3.org/1998/Math/MathML"
 article-type="research-article">
<?properties open_access?>
<front><journal-meta><journal-title-group><journal-title>J Heat</journal-title>
</journal-title-group></journal-meta>
<article-meta><article-id pub-id-type="pmcid">PMC7745181</article-id>
<title-group><article-title>{escape(title)}</article-title></title-group>
<abstract><sec><title>Background</title><p>{escape(abstract)}</p></sec></abstract>
</article-meta></front>
<body>{body}{body_extra}
<fig id="f1"><label>Figure 1</label><caption><p>FIGURE CAPTION</p></caption></fig>
<disp-formula><mml:math><mml:mi>FORMULA</mml:mi></mml:math></disp-formula>
</body>
<back><ref-list><ref id="r1"><element-citation><article-title>REFERENCE TITLE</article-title>
</element-citation></ref></ref-list></back>
</article>""".encode()

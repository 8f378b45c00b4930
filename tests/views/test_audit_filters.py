"""The audit pages' small filters: reasons in words, names that may wrap at underscores, an
estimate's interval kept whole; every one escapes what it is given."""

from prb_annotate.templatetags.prb_audit import breakable, interval_apart, reason


def test_a_reason_reads_as_words_with_its_code_and_meaning_in_the_tooltip() -> None:
    assert reason("too_few_annotations") == (
        '<span class="reason" title="too_few_annotations: fewer annotations than required" '
        'data-reason="too_few_annotations">annotations missing</span>'
    )
    # An unknown code is shown as itself, escaped.
    assert reason("<b>") == (
        '<span class="reason" title="&lt;b&gt;" data-reason="&lt;b&gt;">&lt;b&gt;</span>'
    )


def test_names_wrap_after_underscores_and_intervals_stay_whole() -> None:
    assert breakable("Art_and_<i>") == "Art_<wbr>and_<wbr>&lt;i&gt;"
    assert interval_apart("0.753 [0.539, 0.943]") == (
        '0.753 <span class="interval">[0.539, 0.943]</span>'
    )
    assert interval_apart("undefined") == "undefined"
    assert interval_apart("<x> [1, 2]") == '&lt;x&gt; <span class="interval">[1, 2]</span>'

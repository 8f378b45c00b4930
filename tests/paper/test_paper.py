"""The paper's files from the demo's simulated campaign: the numbers are the audit's, the LaTeX
compiles (where pdflatex is installed), and the page and the API hand out the same zip."""

import io
import json
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.exports.pseudonyms import campaign_pseudonyms, pseudonymised
from prb_annotate.models import Campaign
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import tables
from prb_annotate.paper.methods import agreement_intervals
from prb_annotate.paper.references import AUTHOR_YEAR
from prb_annotate.simulation.demo import SIMULATED_CAMPAIGN
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.support.sampling import TARGETS, pilot, planned_dataset, truth

# A number standing on its own: not part of a word (AC1, rm-8b) or of a longer number.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
TEX_TOOLS = ("pdflatex", "bibtex", "pdftotext")


@pytest.fixture
def simulated(db: None) -> Campaign:
    """The demo's campaign answered by simulated annotators and scored by three baselines."""
    call_command("demo_setup", stdout=StringIO())
    return Campaign.objects.get(name=SIMULATED_CAMPAIGN)


def markdown_audit(campaign: Campaign) -> str:
    """The audit as ``audit --format markdown`` prints it, without resamples."""
    out = StringIO()
    call_command(
        "audit", "--campaign", str(campaign.pk), "--format", "markdown", "--resamples", "0",
        stdout=out,
    )  # fmt: skip
    return out.getvalue()


def write_paper(campaign: Campaign, folder: Path, fmt_name: str = "latex", *extra: str) -> Path:
    call_command(
        "audit",
        "--campaign",
        str(campaign.pk),
        "--format",
        fmt_name,
        "--out",
        str(folder),
        "--resamples",
        "200",
        *extra,
        stderr=StringIO(),
    )
    return folder


def leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, str(name))
    elif isinstance(value, list):
        yield key, len(value)
        for item in value:
            yield from leaves(item, key)
    else:
        yield key, value


def by_the_rule(value: float, digits: int, scale: int = 1) -> str:
    """docs/paper.md's rule, written out here on its own: half away from zero on the shortest
    decimal form, no negative zero."""
    rounded = (Decimal(repr(float(value))) * scale).quantize(
        Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP
    )
    return f"{abs(rounded) if rounded == 0 else rounded:.{digits}f}"


def allowed_numbers(numbers: dict[str, Any]) -> set[str]:
    """Every way the rule may print a number of numbers.json (list lengths count too)."""
    found = {"0.001"}  # "<0.001"
    for key, value in leaves(numbers):
        if isinstance(value, str):
            # A sentence the data carries (an interval's reason, the groups' procedure) is
            # printed as it is: its numbers are the data's too.
            found.update(numbers_in(value))
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if float(value).is_integer():
            found.add(str(int(value)))
        found |= {by_the_rule(value, 3), by_the_rule(value, 1, scale=100)}
        if key.endswith("_ms"):
            found.add(by_the_rule(value / 1000, 1))
        if key == "confidence":
            found.add(by_the_rule(value, 0, scale=100))
    return found | interval_counts(numbers)


def interval_counts(numbers: dict[str, Any]) -> set[str]:
    """The methods paragraph's "8 of the 16 agreement intervals are marked unreliable": counts
    of numbers.json's agreement coefficients (methods._missing_intervals), which only match
    another figure of the file by chance."""
    if not numbers.get("audit"):
        return set()
    shown, unreliable = agreement_intervals(numbers["audit"])
    return {str(len(shown)), str(len(unreliable))}


def numbers_in(text: str) -> list[str]:
    text = text.replace("\u2212", "-")  # the typeset minus sign
    text = re.sub(r"(Table|Figure) \d+:", "", text)
    return NUMBER.findall(text)


def test_the_rounding_rule_rounds_halves_up_on_the_printed_decimal() -> None:
    assert fmt.real(0.0745) == "0.075"  # 0.0745 is 0.07449999... in binary
    assert fmt.percent(0.0745) == "7.5"
    assert fmt.real(-0.0004) == "0.000"  # never "-0.000"
    assert fmt.real(-0.0915) == "-0.092"
    assert fmt.p_value(0.0004) == "<0.001"
    assert fmt.seconds(61_250) == "61.3"
    assert fmt.setting(4.0) == "4"


def test_an_unreliable_interval_is_not_printed() -> None:
    entry = {"value": 0.5, "ci_low": 0.1, "ci_high": 0.9}
    assert fmt.estimate(entry) == "0.500 [0.100, 0.900]"
    assert fmt.estimate({**entry, "reliable": True, "method": "bootstrap"}) == (
        "0.500 [0.100, 0.900]"
    )
    assert fmt.estimate({**entry, "reliable": False, "reason": "few units"}) == "0.500 unreliable"
    assert fmt.estimate({"share": None, "ci_low": None, "ci_high": None}) == fmt.DASH


def compiled_text(folder: Path) -> tuple[str, str]:
    """pdflatex, bibtex, pdflatex twice; the PDF's text before the figures, and from there."""
    missing = [tool for tool in TEX_TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: texlive-latex-recommended)")
    for command in ("pdflatex", "bibtex", "pdflatex", "pdflatex"):
        target = "paper" if command == "bibtex" else "paper.tex"
        options = [] if command == "bibtex" else ["-interaction=nonstopmode", "-halt-on-error"]
        done = subprocess.run(
            [command, *options, target], cwd=folder, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout[-3000:]
    text = subprocess.run(
        ["pdftotext", "paper.pdf", "-"], cwd=folder, capture_output=True, text=True, check=True
    ).stdout
    # The figures start a page of their own (pdftotext marks it with a form feed).
    body, figures = re.split(r"^\f?Figures$", text, maxsplit=1, flags=re.MULTILINE)
    assert "References" in figures
    assert "Krippendorff" in figures
    return body, figures


def printed_numbers(folder: Path) -> tuple[list[str], dict[str, Any]]:
    """The numbers the PDF prints before its figures, each checked to be one of
    numbers.json's under the rounding rule (or a cited year), and numbers.json."""
    body, _ = compiled_text(folder)
    numbers = json.loads((folder / "numbers.json").read_text())
    allowed = allowed_numbers(numbers) | {str(year) for _, year in AUTHOR_YEAR.values()}
    printed = numbers_in(body)
    strangers = sorted({number for number in printed if number not in allowed})
    assert not strangers, f"numbers in the PDF that are not the audit's: {strangers}"
    return printed, numbers


def test_the_pdf_prints_only_the_audits_numbers(simulated: Campaign, tmp_path: Path) -> None:
    """Every number before the figures and the references is one of numbers.json's under the
    rounding rule, and the headline numbers are all there."""
    folder = write_paper(simulated, tmp_path / "paper")
    printed, numbers = printed_numbers(folder)
    assert len(printed) > 150
    audit = numbers["audit"]
    fit = {c["key"]: c for c in audit["agreement"][0]["coefficients"]}
    share = audit["validity"]["overall"]["validated_share"]
    # An interval's bounds are printed only when it is reliable (docs/statistics.md: alpha's
    # needs 60 pairs rated twice, or 100 rated three times).
    bounds = [
        fmt.real(c[side])
        for c in (fit["alpha_nominal"], fit["ac1"])
        if c["reliable"]
        for side in ("ci_low", "ci_high")
    ]
    assert bounds
    expected = [
        fmt.real(fit["alpha_nominal"]["value"]),
        *bounds,
        fmt.percent(share["share"]),
        fmt.percent(share["ci_low"]),
        fmt.percent(audit["bias"]["position"]["share_a"]["share"]),
    ]
    board = numbers["leaderboard"]
    for subset in board["subsets"][:3]:
        expected += [fmt.percent(entry["accuracy"]["value"]) for entry in subset["entries"]]
    assert [number for number in expected if number not in printed] == []
    assert (folder / "figures" / "agreement.pdf").read_bytes().startswith(b"%PDF")
    assert compiled_text(folder)[1].count("Figure ") >= 4


def test_a_planned_sample_gets_its_dataset_estimate(db: None, tmp_path: Path) -> None:
    """The finite-population estimate of the dataset's validated share, Cochran cited; no
    reward model scored: no leaderboard."""
    campaign = create_campaign(planned_dataset(), "planned", k=1, sample_targets=TARGETS, seed=2)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    folder = write_paper(campaign, tmp_path / "paper")
    numbers = json.loads((folder / "numbers.json").read_text())
    found = {table.key: table for table in tables.all_tables(numbers)}
    assert "leaderboard" not in found
    assert numbers["leaderboard"] is None
    overall = numbers["audit"]["sample_estimate"]["overall"]
    assert found["sample-estimate"].rows[-1] == (
        "Dataset (stratified)",
        "300",
        "40",
        "40",
        fmt.estimate(overall["share"], fmt.percent),
    )
    assert (
        fmt.percent((200 * 12 / 21 + 100 * 10 / 19) / 300) in found["sample-estimate"].rows[-1][4]
    )
    assert "cochran1977" in (folder / "references.bib").read_text()
    assert r"\citep{wilson1927,newcombe1998,cochran1977}" in (folder / "methods.tex").read_text()
    assert "mcnemar1947" not in (folder / "references.bib").read_text()
    printed, _ = printed_numbers(folder)
    assert fmt.percent(overall["share"]["share"]) in printed


def test_the_tables_have_their_n_and_the_leaderboards_groups(
    simulated: Campaign, tmp_path: Path
) -> None:
    folder = write_paper(simulated, tmp_path / "paper")
    numbers = json.loads((folder / "numbers.json").read_text())
    found = {table.key: table for table in tables.all_tables(numbers)}
    assert list(found) == [
        "study",
        "agreement",
        "verdicts",
        "reasons",
        "bias",
        "label-agreement",
        "differentiator",
        "ratings",
        "category-agreement",
        "kappa",
        "leaderboard",
        "annotators",
    ]
    for table in found.values():  # each table with its n: a column, or one per subset
        headings = [column.heading for column in table.columns]
        assert "n" in headings or all("(n = " in h for h in headings[1::2]), table.key
    board = numbers["leaderboard"]
    groups = [entry["group"] for entry in board["subsets"][0]["entries"]]
    assert [row[2] for row in found["leaderboard"].rows] == [str(group) for group in groups]
    tex = (folder / "tables.tex").read_text()
    assert tex.count(r"\toprule") == len(found)
    assert r"\label{tab:leaderboard}" in tex
    paper = (folder / "paper.tex").read_text()
    for name in ("agreement", "validity", "reasons", "bias"):
        assert rf"\includegraphics[width=\linewidth]{{figures/{name}.pdf}}" in paper
        assert (folder / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    bib = (folder / "references.bib").read_text()
    for key in ("krippendorff2011", "gwet2008", "wilson1927", "rubin1981", "mcnemar1947"):
        assert rf"\citep{{{key}" in (folder / "methods.tex").read_text() or key in bib
        assert f"{{{key}," in bib
    assert "cochran1977" not in bib  # no planned sample in this campaign
    # The groups are worded from the procedure that formed them; the paper prints no difference
    # to the best, so it names no interval for one.
    # Read as Markdown shows it (names and "#1" are escaped in the source).
    methods = re.sub(r"\\(.)", r"\1", (folder / "methods.md").read_text())
    assert board["settings"]["grouping"]["words"] in " ".join(methods.split())
    assert "{tango1998," not in bib
    assert "efron1979" not in bib  # no percentile bootstrap printed


def test_markdown_says_what_latex_says(simulated: Campaign, tmp_path: Path) -> None:
    latex = write_paper(simulated, tmp_path / "latex")
    markdown = write_paper(simulated, tmp_path / "markdown", "markdown")
    assert (markdown / "paper.md").exists()
    assert not (markdown / "paper.tex").exists()
    tex_methods = re.sub(r"~?\\citep\{[^}]*\}", "", (latex / "methods.tex").read_text())
    md_methods = re.sub(r" ?\([A-Z][^()]*, \d{4}\)", "", (markdown / "methods.md").read_text())
    assert numbers_in(tex_methods.replace("$-$", "-")) == numbers_in(md_methods)
    tex_tables = (latex / "tables.tex").read_text().replace("$-$", "-").replace("$<$", "<")
    tex_tables = re.sub(r"\\setlength\{\\tabcolsep\}\{[^}]*\}", "", tex_tables)  # layout only
    md = (markdown / "paper.md").read_text().split("**Table:", 1)[1].split("## Figures")[0]
    assert numbers_in(tex_tables) == numbers_in("**Table:" + md.replace("&lt;", "<"))


def test_without_a_folder_it_prints_the_tables_and_the_paragraph(simulated: Campaign) -> None:
    out = StringIO()
    call_command(
        "audit",
        "--campaign",
        str(simulated.pk),
        "--format",
        "latex",
        "--resamples",
        "0",
        stdout=out,
    )
    printed = out.getvalue()
    assert printed.count(r"\toprule") == 12
    assert r"Krippendorff's alpha~\citep{krippendorff2011}" in printed
    markdown = markdown_audit(simulated)
    assert "(Krippendorff, 2011)" in markdown
    assert "| Model | All (n = 33) | Group |" in markdown


def test_a_correlations_file_becomes_a_table(simulated: Campaign, tmp_path: Path) -> None:
    path = tmp_path / "correlations.json"
    row = {
        "method": "spearman",
        "n": 5,
        "coefficient": 0.7,
        "p_value": 0.188,
        "ci_low": -0.35,
        "ci_high": 0.97,
        "confidence": 0.95,
        "interval": "fisher",
    }
    path.write_text(json.dumps({"bon": {"models": ["a"], "correlations": [row]}}))
    folder = write_paper(simulated, tmp_path / "paper", "latex", "--correlations", str(path))
    assert (
        r"bon & spearman & 5 & \begin{tabular}[t]{@{}r@{}}0.700\\{\scriptsize [$-$0.350, "
        r"0.970]}\end{tabular} & 0.188 \\" in (folder / "tables.tex").read_text()
    )
    del row["ci_high"]
    path.write_text(json.dumps({"bon": {"correlations": [row]}}))
    with pytest.raises(CommandError, match="'bon' row 1: field 'ci_high' is missing"):
        write_paper(simulated, tmp_path / "bad", "latex", "--correlations", str(path))
    assert not (tmp_path / "bad").exists()


def test_the_audit_page_links_the_zip_and_the_api_gives_it(simulated: Campaign, login: Any) -> None:
    manager = User.objects.get(username="manager")  # demo_setup's accounts
    annotator = User.objects.get(username="alice")
    client = login(manager)
    page = client.get(reverse("campaign_audit", args=[simulated.pk])).content.decode()
    link = reverse("campaign_audit_paper", args=[simulated.pk])
    assert f'href="{link}"' in page
    assert "For a paper" in page
    response = client.get(link)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = archive.namelist()
    folder = names[0].split("/")[0]
    for name in ("paper.tex", "paper.md", "tables.tex", "methods.md", "references.bib"):
        assert f"{folder}/{name}" in names
    assert f"{folder}/figures/bias.svg" in names
    assert f"{folder}/figures/bias.pdf" in names
    if shutil.which("pdflatex") is None:
        assert f"{folder}/preview.pdf" not in names
    else:  # the first page of paper.tex, one page whatever the paper's length
        preview = archive.read(f"{folder}/preview.pdf")
        assert preview.startswith(b"%PDF")
        if shutil.which("pdfinfo"):
            info = subprocess.run(
                ["pdfinfo", "-"], input=preview, capture_output=True, check=True
            ).stdout.decode()
            assert re.search(r"^Pages:\s+1$", info, re.MULTILINE), info
    numbers = json.loads(archive.read(f"{folder}/numbers.json"))
    audit_json = client.get(reverse("campaign_audit_json", args=[simulated.pk])).json()
    # The manager's audit names accounts; the shared file names them as the export does.
    assert numbers["audit"] == pseudonymised(audit_json, campaign_pseudonyms(simulated))

    api = reverse("api_campaign_audit_paper", args=[simulated.pk])
    token = Token.objects.create(user=manager).key
    by_api = Client(HTTP_AUTHORIZATION=f"Token {token}").get(api, {"resamples": 50})
    assert by_api.status_code == 200
    api_numbers = json.loads(
        zipfile.ZipFile(io.BytesIO(by_api.content)).read(f"{folder}/numbers.json")
    )
    assert api_numbers["audit"]["settings"]["resamples"] == 50
    assert login(annotator).get(link).status_code == 404
    other = Token.objects.create(user=annotator).key
    assert Client(HTTP_AUTHORIZATION=f"Token {other}").get(api).status_code in (403, 404)


def test_a_model_annotator_on_the_whole_dataset_gets_its_prediction_powered_table(
    db: None, tmp_path: Path
) -> None:
    """A planned sample with a model annotator over every pair: the prediction-powered estimate
    beside the humans-only one, its sentence, and the two works it rests on."""
    dataset = planned_dataset()
    campaign = create_campaign(dataset, "planned", k=1, sample_targets=TARGETS, seed=2)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    simulate_model_annotator(campaign, truth(dataset), accuracy=0.9, seed=1)
    folder = write_paper(campaign, tmp_path / "paper")
    numbers = json.loads((folder / "numbers.json").read_text())
    overall = numbers["audit"]["ppi"]["overall"]
    found = {table.key: table for table in tables.all_tables(numbers)}
    last = found["ppi"].rows[-1]
    assert last[:3] == ("Dataset (stratified)", "300", "40")
    assert last[4] == fmt.estimate(overall["humans_only"], fmt.percent)
    assert last[6] == fmt.estimate(overall["ppi"], fmt.percent)
    methods = (folder / "methods.tex").read_text()
    assert r"\citep{angelopoulos2023,angelopoulos2024}" in methods
    assert "Prediction-Powered Inference" in (folder / "references.bib").read_text()
    printed, _ = printed_numbers(folder)
    assert fmt.percent(overall["ppi"]["share"]) in printed
    # The simulated model keeps probabilities: the estimate on them, named and cited.
    recalibrated = numbers["audit"]["ppi"]["recalibrated"]["overall"]["estimate"]
    assert recalibrated["method"] == "recalibrated_ppi_wilson_cc"
    assert r"\citep{angelopoulos2024,ji2025,platt1999}" in methods
    assert fmt.percent(recalibrated["share"]) in printed
    assert "Predictions as Surrogates" in (folder / "references.bib").read_text()


def test_without_a_model_annotator_there_is_no_prediction_powered_table(
    simulated: Campaign, tmp_path: Path
) -> None:
    numbers = json.loads((write_paper(simulated, tmp_path / "paper") / "numbers.json").read_text())
    assert "ppi" not in {table.key for table in tables.all_tables(numbers)}

"""Reward-model scoring measured on a GPU, in one run that needs nothing but the project and its
packages (no network, no weights on disk).

It builds reward models from config in the process (``LlamaForSequenceClassification`` with
random weights, a 1B-class and a 3B-class shape, bf16 on CUDA) and synthetic pairs with the
benchmark's length profile (questions of about 50 tokens, answers of 300-1,500 tokens, scored
in profile mode with 10 posts of 20-200 tokens before the question). A word-level tokenizer
makes every word one token, so the lengths are the profile's exactly. For each model:

- our scorer (``evaluation.scoring.score_records``: sorted by length, batched by a token
  budget, the prompt chosen and rejected share run once): pairs/s and real tokens/s;
- the benchmark's own policy on the same model (file order, batches of 8, chosen and rejected
  each padded to their batch's longest, no prefix reuse; ``scoring_bench.reference``);
- achieved TFLOP/s: the forward FLOPs the work needs (``scoring_bench.model_flops``) over the
  measured time, and its share of the chip's bf16 peak (``--peak-tflops``);
- peak memory of our scorer's run, and the largest batch of ``--batch-length``-token sequences
  one forward pass takes (doubling up to ``--batch-cap``, then halving the gap to the first
  size that ran out of memory);
- agreement with an fp32 copy of the model on the first 50 pairs: the largest score
  difference and the decisions (chosen above rejected) that flip;

and a judge's generation throughput (``evaluation.judge.generate_replies``, greedy, the
judge's reply length) on a 1B-class ``LlamaForCausalLM``. One table is printed and written as
JSON (``--json``).

    python bench/gpu_scoring.py                   # on the GPU: 1B and 3B, 2,000 pairs
    python bench/gpu_scoring.py --smoke           # a tiny model on the CPU, a few pairs

On a CPU there is no memory to run out of and no bf16 peak: those cells stay empty, and the
largest batch is the cap.
"""

import argparse
import copy
import gc
import json
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scoring_bench  # a sibling script, found through the path set just above

from evaluation.config import ScoreConfig
from evaluation.inputs import Mode, encode_chats, tokenize_pairs
from evaluation.judge import generate_replies, judge_message
from evaluation.models import LoadedModel, last_token_parts
from evaluation.records import to_pair_record

SHAPES = {
    "tiny": {"hidden": 64, "layers": 2, "heads": 2, "kv_heads": 1, "intermediate": 128},
    # Llama-3.2-1B-like and Llama-3.2-3B-like (a 32k vocabulary: the embedding does no matmul).
    "1b": {"hidden": 2048, "layers": 16, "heads": 32, "kv_heads": 8, "intermediate": 8192},
    "3b": {"hidden": 3072, "layers": 28, "heads": 24, "kv_heads": 8, "intermediate": 8192},
}
VOCAB = {"tiny": 512, "1b": 32000, "3b": 32000}
MODE: Mode = "profile"
POSTS = 10
# Tokens of each text, (fewest, most).
LENGTHS = {"question": (45, 55), "answer": (300, 1500), "post": (20, 200)}
# --smoke divides them: a CPU's attention over 2,000-token sequences alone would take minutes.
SMOKE_LENGTH_DIVISOR = 10
AGREEMENT_PAIRS = 50
WORDS = 4000


# --- inputs --------------------------------------------------------------------------------


def words(seed: int) -> list[str]:
    """Distinct lower-case words, each one token of the word-level tokenizer."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnoprstuvw"
    found: set[str] = set()
    while len(found) < WORDS:
        found.add("".join(rng.choices(letters, k=rng.randint(3, 9))))
    return sorted(found)


def synthetic_pairs(
    count: int, seed: int, vocabulary: list[str], lengths: dict[str, tuple[int, int]]
) -> list[dict[str, Any]]:
    """Pairs with the benchmark's length profile, in the official record shape."""
    rng = random.Random(seed)

    def text(kind: str) -> str:
        return " ".join(rng.choices(vocabulary, k=rng.randint(*lengths[kind])))

    return [
        {
            "id": f"gpu-{index:05d}",
            "category": "bench",
            "question": text("question"),
            "profile": [
                {"id": f"{index}-{n}", "category": "bench", "text": text("post")}
                for n in range(POSTS)
            ],
            "rubric_aspects": [],
            "narrative": "",
            "chosen": text("answer"),
            "rejected": text("answer"),
        }
        for index in range(count)
    ]


def word_tokenizer(vocabulary: list[str]) -> Any:
    """One token per word; the chat template's and the prompts' own words are tokens too."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]
    vocab = {token: index for index, token in enumerate(specials + vocabulary)}
    model = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    model.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=model, pad_token="<pad>", unk_token="<unk>", eos_token="<|im_end|>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": specials[2:]})
    tokenizer.chat_template = scoring_bench.CHATML
    return tokenizer


# --- measurements --------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the table; None where a figure does not apply or was not measured."""

    name: str
    pairs: int
    pairs_per_s: float
    tokens_per_s: float
    tflops: float | None = None
    peak_share: float | None = None
    peak_memory_gib: float | None = None
    largest_batch: str | None = None
    fp32_max_difference: float | None = None
    fp32_flipped: int | None = None


def free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_gib(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    return torch.cuda.max_memory_allocated(device) / 2**30


def tflops_of(flops: float, seconds: float, peak: float | None) -> tuple[float, float | None]:
    achieved = flops / seconds / 1e12
    return achieved, (100 * achieved / peak if peak else None)


@torch.inference_mode()
def largest_batch(loaded: LoadedModel, length: int, cap: int) -> str:
    """The most sequences of ``length`` tokens one forward pass of the backbone takes."""
    runner = loaded.backbone or loaded.model

    def fits(batch: int) -> bool:
        ids = torch.randint(4, len(loaded.tokenizer), (batch, length), device=loaded.device)
        try:
            # As the scorer runs it (evaluation/forward.py): no key-value cache kept.
            runner(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
            scoring_bench.synchronize(loaded.device)
            return True
        except torch.cuda.OutOfMemoryError:
            return False
        finally:
            del ids
            free(loaded.device)

    good, bad = 0, None
    batch = 1
    while batch <= cap:
        if not fits(batch):
            bad = batch
            break
        good, batch = batch, batch * 2
    if bad is None:
        return f">={good} x {length}"
    while bad - good > max(1, good // 16):  # to within about 6 %
        middle = (good + bad) // 2
        good, bad = (middle, bad) if fits(middle) else (good, middle)
    return f"{good} x {length}"


def fp32_agreement(
    loaded: LoadedModel, records: list[dict[str, Any]], chosen: np.ndarray, rejected: np.ndarray
) -> tuple[float, int]:
    """Largest |score difference| between the run and an fp32 copy, and decisions flipped."""
    model = copy.deepcopy(loaded.model).float()
    exact = LoadedModel(model, loaded.tokenizer, loaded.name, loaded.device, torch.float32)
    exact.backbone, exact.head = last_token_parts(model)
    run, _ = scoring_bench.ours(exact, records, MODE, POSTS, None)
    del exact, model
    free(loaded.device)
    difference = max(np.abs(run.chosen - chosen).max(), np.abs(run.rejected - rejected).max())
    flipped = int(np.sum((run.chosen > run.rejected) != (chosen > rejected)))
    return float(difference), flipped


def measure_reward_model(
    size: str, records: list[dict[str, Any]], tokenizer: Any, args: argparse.Namespace
) -> list[Row]:
    device, dtype = args.device, args.dtype
    shape = dict(SHAPES[size], vocab=VOCAB[size])
    loaded = scoring_bench.build_model(tokenizer, shape, device, dtype)
    label = f"{size} ({sum(p.numel() for p in loaded.model.parameters()) / 1e9:.2f}B)"
    scoring_bench.ours(loaded, records[:4], MODE, POSTS, None)  # first-call allocations
    free(device)
    our, _ = scoring_bench.ours(loaded, records, MODE, POSTS, None)
    memory = peak_memory_gib(device)
    pairs = tokenize_pairs(tokenizer, [to_pair_record(r) for r in records], MODE, top_k=POSTS)
    our_flops = scoring_bench.model_flops(shape, pairs, shared_prompt=True)
    ours_row = Row(
        f"scorer {label}",
        len(records),
        len(records) / our.seconds,
        our.real / our.seconds,
        *tflops_of(our_flops, our.seconds, args.peak),
        peak_memory_gib=memory,
        largest_batch=largest_batch(loaded, args.batch_length, args.batch_cap),
    )
    sample = records[: args.reference_pairs]
    reference = scoring_bench.reference(loaded, sample, MODE, POSTS)
    reference_flops = scoring_bench.model_flops(shape, pairs[: len(sample)], shared_prompt=False)
    reference_row = Row(
        f"benchmark policy {label}",
        len(sample),
        len(sample) / reference.seconds,
        reference.real / reference.seconds,
        *tflops_of(reference_flops, reference.seconds, args.peak),
    )
    checked = min(AGREEMENT_PAIRS, len(records))
    difference, flipped = fp32_agreement(
        loaded, records[:checked], our.chosen[:checked], our.rejected[:checked]
    )
    ours_row.fp32_max_difference, ours_row.fp32_flipped = difference, flipped
    del loaded
    free(device)
    return [ours_row, reference_row]


def measure_judge(records: list[dict[str, Any]], tokenizer: Any, args: argparse.Namespace) -> Row:
    """Greedy replies of a random causal LM to the judge's prompts, as ``evaluate --judge``."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    size = args.judge_size
    shape = SHAPES[size]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=shape["hidden"],
        intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    with torch.device(args.device):
        model = AutoModelForCausalLM.from_config(
            config, attn_implementation="sdpa", dtype=args.dtype
        )
    model.eval()
    loaded = LoadedModel(model, tokenizer, f"random-judge-{size}", args.device, args.dtype)
    settings = ScoreConfig(model=loaded.name, mode="question", resamples=0)
    prompts = []
    for record in records[: args.judge_prompts]:
        pair = to_pair_record(record)
        message = judge_message(pair, pair.chosen, pair.rejected, "question", 0)
        prompts += encode_chats(
            tokenizer, [[{"role": "user", "content": message}]], add_generation_prompt=True
        )
    generate_replies(loaded, prompts[:2], settings)  # first-call allocations
    free(args.device)
    scoring_bench.synchronize(args.device)
    started = time.perf_counter()
    generate_replies(loaded, prompts, settings)
    scoring_bench.synchronize(args.device)
    seconds = time.perf_counter() - started
    parameters = sum(p.numel() for p in model.parameters()) / 1e9
    row = Row(
        f"judge {size} ({parameters:.2f}B), {settings.max_new_tokens} new tokens",
        len(prompts),
        len(prompts) / seconds,
        sum(len(ids) for ids in prompts) / seconds,
        peak_memory_gib=peak_memory_gib(args.device),
    )
    del loaded, model
    free(args.device)
    return row


# --- the table -----------------------------------------------------------------------------

COLUMNS = (
    ("pairs", "pairs", "{:d}"),
    ("pairs_per_s", "pairs/s", "{:.2f}"),
    ("tokens_per_s", "tokens/s", "{:.0f}"),
    ("tflops", "TFLOP/s", "{:.3g}"),
    ("peak_share", "% of peak", "{:.1f}"),
    ("peak_memory_gib", "peak GiB", "{:.1f}"),
    ("largest_batch", "largest batch", "{}"),
    ("fp32_max_difference", "fp32 max |diff|", "{:.2e}"),
    ("fp32_flipped", "flipped", "{:d}"),
)


def table(rows: list[Row]) -> list[str]:
    """The rows under the COLUMNS' headings, right-aligned, "-" where a figure is None."""
    cells = [
        [
            "-" if (value := getattr(row, key)) is None else shape.format(value)
            for key, _, shape in COLUMNS
        ]
        for row in rows
    ]
    widths = [
        max(len(heading), *(len(line[column]) for line in cells))
        for column, (_, heading, _) in enumerate(COLUMNS)
    ]
    names = max(len(row.name) for row in rows)
    headings = [heading for _, heading, _ in COLUMNS]
    return [
        f"{name:<{names}}  " + "  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True))
        for name, line in [("", headings), *((row.name, cells[i]) for i, row in enumerate(rows))]
    ]


def machine(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}, CUDA {torch.version.cuda}"
    return f"CPU ({platform.processor() or platform.machine()}), {torch.get_num_threads()} threads"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny model on the CPU, 6 pairs")
    parser.add_argument("--sizes", nargs="+", choices=sorted(SHAPES), help="default: 1b 3b")
    parser.add_argument("--pairs", type=int, help="pairs scored (default: 2000)")
    parser.add_argument(
        "--reference-pairs", type=int, help="pairs run by the benchmark's policy (default: 500)"
    )
    parser.add_argument("--judge-size", choices=sorted(SHAPES), help="default: 1b")
    parser.add_argument("--judge-prompts", type=int, help="default: 64")
    parser.add_argument("--batch-length", type=int, help="tokens per sequence (default: 2048)")
    parser.add_argument("--batch-cap", type=int, help="largest batch tried (default: 256)")
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=989.0,
        help="the chip's dense bf16 peak (989: H200 SXM's datasheet; pass the chip's own)",
    )
    parser.add_argument("--device", help="default: cuda when present, else cpu")
    parser.add_argument("--json", default="gpu_scoring.json", help="where the table is written")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    defaults = (
        {"sizes": ["tiny"], "pairs": 6, "reference_pairs": 6, "judge_size": "tiny"}
        | {"judge_prompts": 2, "batch_length": 256, "batch_cap": 4, "device": "cpu"}
        if args.smoke
        else {"sizes": ["1b", "3b"], "pairs": 2000, "reference_pairs": 500, "judge_size": "1b"}
        | {"judge_prompts": 64, "batch_length": 2048, "batch_cap": 256, "device": None}
    )
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    args.dtype = torch.bfloat16 if args.device.type == "cuda" else torch.float32
    args.peak = args.peak_tflops if args.device.type == "cuda" else None
    divisor = SMOKE_LENGTH_DIVISOR if args.smoke else 1
    args.lengths = {
        kind: (max(1, low // divisor), max(1, high // divisor))
        for kind, (low, high) in LENGTHS.items()
    }
    if args.smoke:
        torch.set_num_threads(1)  # OpenMP threads waiting on a shared CPU cost more than they bring
    return args


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    vocabulary = words(args.seed)
    records = synthetic_pairs(args.pairs, args.seed, vocabulary, args.lengths)
    tokenizer = word_tokenizer(vocabulary)
    rows = [
        row for size in args.sizes for row in measure_reward_model(size, records, tokenizer, args)
    ]
    rows.append(measure_judge(records, tokenizer, args))
    seconds = time.perf_counter() - started
    header = (
        f"{machine(args.device)}, {str(args.dtype).removeprefix('torch.')}, torch "
        f"{torch.__version__}; {args.pairs} pairs in {MODE} mode ({POSTS} posts), tokens per "
        + ", ".join(f"{kind} {low}-{high}" for kind, (low, high) in args.lengths.items())
        + "; "
        + (f"peak {args.peak:.0f} TFLOP/s; " if args.peak else "")
        + f"{seconds:.0f} s in all"
    )
    print(header)
    for line in table(rows):
        print(line)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(args.device),
        "torch": torch.__version__,
        "dtype": str(args.dtype).removeprefix("torch."),
        "peak_tflops": args.peak,
        "mode": MODE,
        "posts": POSTS,
        "lengths": args.lengths,
        "seconds": seconds,
        "rows": [asdict(row) for row in rows],
    }
    Path(args.json).write_text(json.dumps(report, indent=2, allow_nan=False) + "\n")
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()

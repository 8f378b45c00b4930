"""Reward-model scoring speed: our scorer against the benchmark's reference policy.

The reference policy is the benchmark's own evaluator: records in file order, batches of 8,
chosen and rejected run as separate batches, each padded to its longest member. Ours
tokenizes once, sorts by length, batches by a token budget and, in profile mode, runs the
prompt chosen and rejected share once.

A CPU is compute-bound, so the only gain there is work not done. The ideal speed-up is the
reference's padded token positions divided by the positions our scorer needs (every real
token, a prompt shared by chosen and rejected counted once); the script prints how much of it
the measured speed-up reaches.

    python bench/scoring_bench.py                              # ~20M model on the CPU, a sample
    python bench/scoring_bench.py --limit 2800 --preset 1b --device cuda   # on a GPU, bf16

Records come from ``fixtures/make_synthetic.py`` when it is there (2,800 records in the
official schema), else from a small generator below with the same length ranges.
"""

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.batching import pad_batch  # noqa: E402
from evaluation.config import ScoreConfig  # noqa: E402
from evaluation.inputs import Mode, TokenizedPair, conversation, encode_chats, tokenize_pairs  # noqa: E402
from evaluation.models import LoadedModel, last_token_parts, resolve_device, resolve_dtype  # noqa: E402
from evaluation.records import to_pair_record  # noqa: E402
from evaluation.scoring import score_records  # noqa: E402

PRESETS = {
    # ~21M parameters: the default on a CPU.
    "20m": {
        "hidden": 384,
        "layers": 10,
        "heads": 6,
        "kv_heads": 2,
        "intermediate": 1024,
        "vocab": 8192,
    },
    # ~1.0B parameters, Llama-3.2-1B-like, for a GPU.
    "1b": {
        "hidden": 2048,
        "layers": 16,
        "heads": 32,
        "kv_heads": 8,
        "intermediate": 8192,
        "vocab": 32000,
    },
}
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
REFERENCE_BATCH = 8


def synthetic(count: int, seed: int) -> list[dict]:
    try:
        from fixtures.make_synthetic import synthetic_records

        return list(synthetic_records(count, seed=seed))
    except ImportError:
        return fallback_records(count, seed)


def fallback_records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    syllables = [
        "ba",
        "ke",
        "lo",
        "mi",
        "nu",
        "ra",
        "so",
        "ti",
        "vu",
        "ze",
        "dor",
        "fen",
        "gal",
        "pir",
    ]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 3))) for _ in range(3000)})
    weights = [1 / (rank + 1) for rank in range(len(words))]

    def text(n: int) -> str:
        return " ".join(rng.choices(words, weights, k=n))

    return [
        {
            "id": f"fallback-{index}",
            "question": text(rng.randint(10, 60)) + "?",
            "profile": [
                {"id": f"{index}-{n}", "category": "x", "text": text(rng.randint(20, 200))}
                for n in range(rng.randint(8, 20))
            ],
            "rubric_aspects": [],
            "narrative": "",
            "category": "x",
            "chosen": text(rng.randint(40, 140)),
            "rejected": text(rng.randint(40, 140)),
        }
        for index in range(count)
    ]


def build_tokenizer(records: list[dict], vocab: int) -> Any:
    from transformers import PreTrainedTokenizerFast

    model = Tokenizer(models.BPE(unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"],
        show_progress=False,
    )
    sample = records[:300]
    model.train_from_iterator(
        [r["question"] for r in sample]
        + [r["chosen"] for r in sample]
        + [p["text"] for r in sample for p in r["profile"]],
        trainer,
    )
    model.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=model, pad_token="<pad>", unk_token="<unk>", eos_token="<|im_end|>"
    )
    tokenizer.chat_template = CHATML
    return tokenizer


def build_model(
    tokenizer: Any, shape: dict, device: torch.device, dtype: torch.dtype
) -> LoadedModel:
    from transformers import AutoModelForSequenceClassification, LlamaConfig

    config = LlamaConfig(
        vocab_size=max(shape["vocab"], len(tokenizer)),
        hidden_size=shape["hidden"],
        intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    config.num_labels = 1
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForSequenceClassification.from_config(
            config, attn_implementation="sdpa", dtype=dtype
        )
    model.eval()
    loaded = LoadedModel(
        model, tokenizer, f"random-llama-{shape['hidden']}x{shape['layers']}", device, dtype
    )
    loaded.backbone, loaded.head = last_token_parts(model)
    return loaded


@dataclass
class Run:
    seconds: float
    chosen: np.ndarray
    rejected: np.ndarray
    computed: int  # token positions run, padding included
    real: int  # real tokens of all sequences


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.inference_mode()
def reference(loaded: LoadedModel, records: list[dict], mode: Mode, top_k: int) -> Run:
    """File order, 8 records a batch, chosen and rejected each padded to their batch's longest."""
    synchronize(loaded.device)
    started = time.perf_counter()
    chosen: list[float] = []
    rejected: list[float] = []
    computed = real = 0
    for start in range(0, len(records), REFERENCE_BATCH):
        pairs = [to_pair_record(r) for r in records[start : start + REFERENCE_BATCH]]
        for side, out in (("chosen", chosen), ("rejected", rejected)):
            ids = encode_chats(
                loaded.tokenizer, [conversation(p, getattr(p, side), mode, top_k) for p in pairs]
            )
            input_ids, mask = pad_batch(ids, loaded.pad_id, "right")
            logits = loaded.model(
                input_ids=input_ids.to(loaded.device), attention_mask=mask.to(loaded.device)
            ).logits
            out.extend(logits[:, 0].float().cpu().tolist())
            computed += input_ids.numel()
            real += int(mask.sum())
    synchronize(loaded.device)
    return Run(time.perf_counter() - started, np.array(chosen), np.array(rejected), computed, real)


def ours(
    loaded: LoadedModel, records: list[dict], mode: Mode, top_k: int, max_batch_tokens: int | None
) -> tuple[Run, int]:
    config = ScoreConfig(
        model=loaded.name, mode=mode, top_k=top_k, max_batch_tokens=max_batch_tokens, resamples=0
    )
    synchronize(loaded.device)
    started = time.perf_counter()
    result = score_records(records, config, model=loaded)
    synchronize(loaded.device)
    seconds = time.perf_counter() - started
    stats = result.stats
    needed = stats.computed_positions - stats.padding_positions
    run = Run(
        seconds,
        np.array([p.chosen_score for p in result.pairs]),
        np.array([p.rejected_score for p in result.pairs]),
        stats.computed_positions,
        stats.real_tokens,
    )
    return run, needed


def model_flops(shape: dict, pairs: list[TokenizedPair], shared_prompt: bool) -> float:
    """Forward FLOPs of the work that has to be done: 2 x non-embedding parameters per needed
    token, plus causal attention (QK and AV: 2 x L^2 x hidden per layer per sequence), a
    shared prompt's own attention counted once."""
    hidden, layers = shape["hidden"], shape["layers"]
    kv = hidden * shape["kv_heads"] // shape["heads"]
    per_token = (
        2 * layers * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * shape["intermediate"])
    )
    total = 0.0
    for pair in pairs:
        prompt = pair.shared_prefix if shared_prompt else 0
        tokens = len(pair.chosen) + len(pair.rejected) - prompt
        squares = len(pair.chosen) ** 2 + len(pair.rejected) ** 2 - prompt**2
        total += per_token * tokens + 2 * layers * hidden * squares
    return total


def report(mode: Mode, sample: list[dict], ref: Run, our: Run, needed: int) -> None:
    ideal = ref.computed / needed
    speedup = ref.seconds / our.seconds
    average = ref.real / len(sample) / 2
    print(f"\n{mode} mode, {len(sample)} pairs ({average:.0f} tokens per sequence on average)")
    print(
        f"{'':<10} {'pairs/s':>9} {'tokens/s':>10} {'padding':>8} {'positions':>10} {'seconds':>8}"
    )
    for name, run, useful in (("reference", ref, ref.real), ("ours", our, needed)):
        print(
            f"{name:<10} {len(sample) / run.seconds:>9.2f} {run.real / run.seconds:>10.0f} "
            f"{100 * (1 - useful / run.computed):>7.1f}% {run.computed:>10} {run.seconds:>8.1f}"
        )
    print(
        f"speed-up {speedup:.2f}x; ideal {ideal:.2f}x (reference positions / positions needed: "
        f"{ref.computed} / {needed}); reached {100 * speedup / ideal:.0f}% of the ideal"
    )
    difference = max(
        np.abs(ref.chosen - our.chosen).max(), np.abs(ref.rejected - our.rejected).max()
    )
    print(f"largest score difference between the two: {difference:.2e}")


def report_peak(
    shape: dict,
    loaded: LoadedModel,
    sample: list[dict],
    mode: Mode,
    runs: dict[str, Run],
    args: argparse.Namespace,
) -> None:
    pairs = tokenize_pairs(
        loaded.tokenizer, [to_pair_record(r) for r in sample], mode, top_k=args.top_k
    )
    for name, run in runs.items():
        tflops = (
            model_flops(shape, pairs, shared_prompt=name == "ours" and mode == "profile")
            / run.seconds
            / 1e12
        )
        share = 100 * tflops / args.peak_tflops
        print(f"{name}: {tflops:.1f} TFLOP/s of needed work, {share:.1f}% of the bf16 peak")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2800, help="synthetic records generated")
    parser.add_argument(
        "--limit",
        type=int,
        help="score only the first N (default: 160 question, 16 profile on CPU; all on CUDA)",
    )
    parser.add_argument(
        "--modes", nargs="+", default=["question", "profile"], choices=["question", "profile"]
    )
    parser.add_argument(
        "--preset", choices=sorted(PRESETS), help="model size (default: 20m on CPU, 1b on CUDA)"
    )
    parser.add_argument(
        "--hidden", type=int, help="override the preset's hidden size (heads of 64)"
    )
    parser.add_argument("--layers", type=int, help="override the preset's layer count")
    parser.add_argument("--device", help="cpu or cuda (default: cuda if present)")
    parser.add_argument("--dtype", help="default: bfloat16 on cuda, float32 on cpu")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--max-batch-tokens", type=int)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: on a busy 2-core machine, OpenMP threads waiting for "
        "each other cost more than the second core brings, and the figures stop meaning anything)",
    )
    parser.add_argument(
        "--peak-tflops", type=float, default=989.0, help="dense bf16 peak (H200: ~989)"
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def model_shape(args: argparse.Namespace, device: torch.device) -> dict:
    shape = dict(PRESETS[args.preset or ("1b" if device.type == "cuda" else "20m")])
    if args.hidden:
        heads = max(1, args.hidden // 64)
        shape.update(
            hidden=args.hidden,
            heads=heads,
            kv_heads=heads // 2 or 1,
            intermediate=args.hidden * 8 // 3,
        )
    if args.layers:
        shape["layers"] = args.layers
    return shape


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)  # also used for the CPU work on a GPU run
    device = resolve_device(args.device)
    dtype = resolve_dtype(args.dtype, device)
    shape = model_shape(args, device)

    started = time.perf_counter()
    records = synthetic(args.records, args.seed)
    loaded = build_model(build_tokenizer(records, shape["vocab"]), shape, device, dtype)
    parameters = sum(p.numel() for p in loaded.model.parameters())
    print(
        f"{len(records)} records, model {parameters / 1e6:.1f}M parameters, {device} "
        f"{str(dtype).removeprefix('torch.')}, {torch.get_num_threads()} CPU threads, "
        f"set up in {time.perf_counter() - started:.1f} s"
    )
    # A short warm-up so that neither side pays for first-call allocations.
    ours(loaded, records[:4], "question", args.top_k, args.max_batch_tokens)
    for mode in args.modes:
        default_limit = (
            {"question": 160, "profile": 16}[mode] if device.type == "cpu" else len(records)
        )
        sample = records[: args.limit or default_limit]
        ref = reference(loaded, sample, mode, args.top_k)
        our, needed = ours(loaded, sample, mode, args.top_k, args.max_batch_tokens)
        report(mode, sample, ref, our, needed)
        if device.type == "cuda":
            report_peak(shape, loaded, sample, mode, {"reference": ref, "ours": our}, args)


if __name__ == "__main__":
    main()

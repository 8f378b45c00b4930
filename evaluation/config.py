"""Settings of a scoring run: one typed object for the library and the command line."""

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from evaluation.inputs import Mode

if TYPE_CHECKING:  # the built-in baselines use this module without torch
    import torch

PrefixReuse = Literal["auto", "on", "off"]

# Token positions (rows x padded length) per forward pass. A CPU gains nothing from big batches
# once matmuls are a few thousand rows tall; a GPU wants them large.
CPU_BATCH_TOKENS = 4096
CUDA_BATCH_TOKENS = 32768


@dataclass(frozen=True)
class ScoreConfig:
    """What to score and how.

    Attributes:
        model: local folder or Hub id of the reward model (or of the judge with ``judge``).
        mode: ``question`` (user: question, assistant: answer) or ``profile`` (the user's first
            ``top_k`` profile posts before the question).
        top_k: profile posts shown in profile mode, in the order the record gives them.
        judge: score with a causal LM asked which answer fits the user better, instead of a
            classifier reward model.
        both_orders: judge each pair twice, with the answers swapped; needed for position
            consistency. Otherwise each pair gets one order, drawn from ``seed`` and its id.
        device, dtype: ``None`` picks CUDA + bfloat16 when there is a GPU, else CPU + float32.
        max_batch_tokens: token positions per forward pass (rows x padded length); ``None``
            picks a default for the device.
        max_length: longest sequence allowed; ``None`` takes the model's own limit. In profile
            mode a longer pair keeps fewer posts.
        prefix_reuse: compute the prompt chosen and rejected share once and reuse its KV cache
            for both answers; ``auto`` does so in profile mode, where the prompt is long.
        padding_side: ``left`` or ``right``; ``None`` follows the tokenizer. Scores do not
            depend on it; it is there to prove so.
        label_index: for classifiers with several labels, which logit is the reward. By default
            one label is the reward, and with two labels the reward is ``logit[1] - logit[0]``.
        tie_tolerance: scores closer than this count as a tie (default: exactly equal).
        chat_template: a Jinja chat template replacing (or supplying) the tokenizer's.
        max_new_tokens: reply length a judge may generate.
        seed: judge answer positions and bootstrap resampling.
        resamples, confidence: bootstrap of the accuracy intervals.
        group_by: a record label (``validation.verdict``, ``split``, any scalar field) to report
            accuracy by; ``None`` uses ``validation.verdict`` when records have it.
        progress: show a progress bar.
    """

    model: str
    mode: Mode = "question"
    top_k: int = 10
    judge: bool = False
    both_orders: bool = False
    device: str | None = None
    dtype: str | None = None
    max_batch_tokens: int | None = None
    max_length: int | None = None
    prefix_reuse: PrefixReuse = "auto"
    padding_side: str | None = None
    label_index: int | None = None
    tie_tolerance: float = 0.0
    chat_template: str | None = None
    trust_remote_code: bool = False
    max_new_tokens: int = 16
    seed: int = 0
    resamples: int = 2000
    confidence: float = 0.95
    group_by: str | None = None
    progress: bool = False

    def batch_tokens(self, device: "torch.device") -> int:
        """``max_batch_tokens``, or the default for ``device``."""
        if self.max_batch_tokens is not None:
            return self.max_batch_tokens
        return CUDA_BATCH_TOKENS if device.type == "cuda" else CPU_BATCH_TOKENS

    def as_dict(self) -> dict[str, Any]:
        settings = asdict(self)
        settings.pop("progress")
        if settings["chat_template"] is not None:
            settings["chat_template"] = "(given)"
        return settings

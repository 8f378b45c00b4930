"""``python -m evaluation`` (also under ``torchrun ... -m evaluation``)."""

from evaluation.cli import main

raise SystemExit(main())

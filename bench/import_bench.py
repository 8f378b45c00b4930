"""Import speed and memory: synthetic records through ``import_path`` on SQLite and PostgreSQL.

    python bench/import_bench.py                       # 100,000 and 20,000 records, both databases
    python bench/import_bench.py --records 5000 --databases sqlite
    python bench/import_bench.py --shape chat --records 500000 50000 --databases sqlite --readers
    python bench/import_bench.py --shape chat --records 50000 --databases sqlite --readers datasets

``--shape chat`` writes chat-message records (``chosen``/``rejected`` as lists of turns, a
system turn and two earlier turns of context, about 1 KB a record) instead of the official
ones; ``--readers`` also reads each file with ``datasets.load_dataset("json", ...)`` (which
converts it to an Arrow file in a throwaway cache and maps it), and whole with pyarrow
(``pyarrow.json.read_json``) and pandas (``read_json(lines=True)``), each in a fresh
subprocess, for their records per second and peak RSS beside the import's; ``--readers
datasets`` runs only the named ones.

Each (database, size) runs in a fresh subprocess on a fresh database (a throwaway SQLite file;
the PostgreSQL database ``prb_bench_import``, dropped and created again, and dropped at the
end), so peak RSS belongs to that one import. Peak RSS at two sizes shows whether memory grows
with the file: it should not (duplicate ids are found by a filter of fixed size).
"Client CPU s" is the importing process's own CPU time: on a busy machine it varies much less
than wall time. PostgreSQL's server work is not in it; it runs alongside the client's (the
COPY stays open while records are read), so on two idle cores the wall time is about the
larger of the two. SQLite's work, including the checkpoint at commit, is in it.

The synthetic records average about 10 KB (a profile of 8-20 posts), so 100,000 of them are a
1 GB file.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/prb_bench_import"
READERS = ["datasets", "pyarrow", "pandas"]


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chat_record(index: int) -> dict[str, Any]:
    prompt = [
        {"role": "system", "content": "You are a helpful assistant who answers briefly."},
        {"role": "user", "content": f"I have been learning the guitar for {index % 12} months."},
        {"role": "assistant", "content": "That is a good start. What would you like to play?"},
        {"role": "user", "content": f"Which song should I learn next, question {index}?"},
    ]
    answer = "Try a song with three open chords and a slow strumming pattern; " * 3
    return {
        "id": f"chat-{index:07d}",
        "chosen": [*prompt, {"role": "assistant", "content": f"{answer} ({index})"}],
        "rejected": [*prompt, {"role": "assistant", "content": f"Any song. ({index})"}],
    }


def write_chat(count: int, path: Path) -> int:
    with path.open("w", encoding="utf-8") as file:
        for index in range(count):
            file.write(json.dumps(chat_record(index), allow_nan=False) + "\n")
    return path.stat().st_size


def read_whole(reader: str, path: Path) -> dict[str, Any]:
    """Runs in the subprocess: read the file with datasets, or whole with pyarrow or pandas."""
    if reader == "datasets":
        # Only the file is read: no hub is asked anything.
        os.environ["HF_HUB_OFFLINE"] = "1"
        import datasets
    baseline = peak_rss_mb()
    started = time.perf_counter()
    if reader == "datasets":
        with tempfile.TemporaryDirectory(prefix="prb_bench_datasets_") as cache:
            loaded = datasets.load_dataset(
                "json", data_files=str(path), split="train", cache_dir=cache
            )
            rows = sum(len(batch["id"]) for batch in loaded.iter(batch_size=1000))
    elif reader == "pyarrow":
        import pyarrow.json

        rows = pyarrow.json.read_json(path).num_rows
    else:
        import pandas

        rows = len(pandas.read_json(path, lines=True, dtype=False))
    return {
        "records": rows,
        "seconds": time.perf_counter() - started,
        "baseline_mb": baseline,
        "peak_mb": peak_rss_mb(),
    }


def child(database_url: str, path: Path) -> dict[str, Any]:
    """Runs in the subprocess: migrate a fresh database, then time one import."""
    os.environ["DATABASE_URL"] = database_url
    # A server on its own database refuses to start without a key; any will do for a bench.
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-never-used-by-a-server")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from prb_annotate.datasets.importing import import_path

    call_command("migrate", verbosity=0)
    baseline = peak_rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    report = import_path(path, "bench")
    return {
        "records": report.created,
        "seconds": time.perf_counter() - started,
        # This process only: on a busy machine wall time varies, this much less.
        "cpu_seconds": time.process_time() - cpu_started,
        "baseline_mb": baseline,
        "peak_mb": peak_rss_mb(),
    }


def drop_postgres(url: str, *, create: bool) -> None:
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')


def run_child(database_url: str, path: Path, reader: str | None = None) -> dict[str, Any]:
    if reader is None:
        command = [sys.executable, __file__, "--child", database_url, str(path)]
    else:
        command = [sys.executable, __file__, "--read", reader, str(path)]
    output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="Import benchmark on SQLite and PostgreSQL.")
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 20_000])
    parser.add_argument(
        "--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"]
    )
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shape", choices=["official", "chat"], default="official")
    parser.add_argument(
        "--readers",
        nargs="*",
        choices=READERS,
        default=None,
        help="also read each file with these (all of them when none is named)",
    )
    parser.add_argument("--read", nargs=2, metavar=("READER", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--child", nargs=2, metavar=("DATABASE_URL", "FILE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1])), allow_nan=False))
        return
    if args.read:
        print(json.dumps(read_whole(args.read[0], Path(args.read[1])), allow_nan=False))
        return

    sys.path.insert(0, str(ROOT))
    from fixtures.make_synthetic import write_synthetic

    with tempfile.TemporaryDirectory(prefix="prb_import_bench_") as folder:
        files = {}
        for count in args.records:
            path = Path(folder) / f"{args.shape}_{count}.jsonl"
            started = time.perf_counter()
            if args.shape == "chat":
                size = write_chat(count, path)
            else:
                size = write_synthetic(count, path, seed=args.seed)
            seconds = time.perf_counter() - started
            print(f"generated {count:,} records, {size / 1e6:,.0f} MB, in {seconds:.1f} s")
            files[count] = path

        print()
        print(
            f"{'reading':<10} {'records':>9} {'seconds':>8} {'records/s':>10} "
            f"{'client CPU s':>13} {'peak RSS MB':>12} {'before import':>14}"
        )
        readers = [] if args.readers is None else (args.readers or READERS)
        for database in [*args.databases, *readers]:
            for count, path in files.items():
                if database in readers:
                    result = run_child("", path, reader=database)
                    assert result["records"] == count, result
                    print(
                        f"{database:<10} {count:>9,} {result['seconds']:>8.1f} "
                        f"{count / result['seconds']:>10,.0f} {'':>13} "
                        f"{result['peak_mb']:>12,.0f} {result['baseline_mb']:>14,.0f}",
                        flush=True,
                    )
                    continue
                if database == "postgres":
                    drop_postgres(args.pg_url, create=True)
                    url = args.pg_url
                else:
                    url = f"sqlite:///{Path(folder) / f'bench_{count}.sqlite3'}"
                result = run_child(url, path)
                assert result["records"] == count, result
                rate = count / result["seconds"]
                print(
                    f"{database:<10} {count:>9,} {result['seconds']:>8.1f} {rate:>10,.0f} "
                    f"{result['cpu_seconds']:>13.1f} {result['peak_mb']:>12,.0f} "
                    f"{result['baseline_mb']:>14,.0f}",
                    flush=True,
                )
                if database == "postgres":
                    drop_postgres(args.pg_url, create=False)
                else:
                    for leftover in Path(folder).glob(f"bench_{count}.sqlite3*"):
                        leftover.unlink()


if __name__ == "__main__":
    main()

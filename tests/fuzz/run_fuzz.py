#!/usr/bin/env python3
"""Runs one fuzz target for a bounded time over a fresh copy of its seeds.

The seed corpus is built at run time from the project's data, so nothing is
written into the source tree:
  --seed DIR:PATTERN   copy the files of DIR matching PATTERN (several allowed)
  --crop map|scen      cut large MovingAI maps into 32x32 windows, large
                       scenario files to their first rows, so the fuzzer
                       starts from small, realistic inputs
  --random N           add N random byte files (fixed seed) for byte-driven
                       targets
  --dict FILE, --max-len N   passed on to the fuzzer
Every seed is first run once on its own (a regression pass), then the fuzzer
runs for --seconds (default: $QN_FUZZ_SECONDS or 30) over the copy in
WORKDIR/corpus, writing any crash to WORKDIR/artifacts/. Exits non-zero when
the target fails.
"""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys

CROP = 32
REPLAY_LIMIT = 600  # seconds for running every seed once
MAX_SEED_BYTES = 8192


def crop_map(text):
    """32x32 windows of a large octile map: corners, centre, a few more."""
    lines = text.replace('\r\n', '\n').split('\n')
    try:
        start = lines.index('map') + 1
    except ValueError:
        return [text]
    rows = [r for r in lines[start:] if r]
    if not rows:
        return [text]
    h, w = len(rows), min(len(r) for r in rows)
    if h <= CROP and w <= CROP:
        return [text]
    ch, cw = min(CROP, h), min(CROP, w)
    rng = random.Random(h * 100003 + w)
    spots = [(0, 0), ((h - ch) // 2, (w - cw) // 2), (h - ch, w - cw)]
    spots += [(rng.randrange(h - ch + 1), rng.randrange(w - cw + 1)) for _ in range(3)]
    out = []
    for y, x in spots:
        body = '\n'.join(r[x:x + cw] for r in rows[y:y + ch])
        out.append('type octile\nheight %d\nwidth %d\nmap\n%s\n' % (ch, cw, body))
    return out


def crop_scen(text):
    """The header and the first 24 rows of a large scenario file."""
    lines = text.split('\n')
    head = 1 if lines and lines[0].startswith('version') else 0
    return ['\n'.join(lines[:head + 24]) + '\n']


def build_corpus(args, corpus):
    os.makedirs(corpus)
    n = 0
    for spec in args.seed:
        folder, _, pattern = spec.rpartition(':')
        for path in sorted(glob.glob(os.path.join(folder, pattern))):
            data = open(path, 'rb').read()
            pieces = [data]
            if args.crop and len(data) > MAX_SEED_BYTES:
                crop = crop_map if args.crop == 'map' else crop_scen
                pieces = [p.encode() for p in crop(data.decode('latin-1'))]
            base = os.path.basename(os.path.dirname(path)) + '_' + os.path.basename(path)
            for i, piece in enumerate(pieces):
                name = base if len(pieces) == 1 else '%s.crop%d' % (base, i)
                with open(os.path.join(corpus, name), 'wb') as f:
                    f.write(piece)
                n += 1
    rng = random.Random(20240611)
    for i in range(args.random):
        size = rng.choice([16, 48, 96, 200, 400])
        with open(os.path.join(corpus, 'random%02d' % i), 'wb') as f:
            f.write(bytes(rng.randrange(256) for _ in range(size)))
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--fuzzer', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--seconds', type=int,
                    default=int(os.environ.get('QN_FUZZ_SECONDS', '30')))
    ap.add_argument('--dict')
    ap.add_argument('--max-len', type=int)
    ap.add_argument('--seed', action='append', default=[])
    ap.add_argument('--crop', choices=['map', 'scen'])
    ap.add_argument('--random', type=int, default=0)
    args = ap.parse_args()

    name = os.path.basename(args.fuzzer)
    shutil.rmtree(args.workdir, ignore_errors=True)
    corpus = os.path.join(args.workdir, 'corpus')
    artifacts = os.path.join(args.workdir, 'artifacts')
    count = build_corpus(args, corpus)
    os.makedirs(artifacts)
    if count == 0:
        print('%s: no seeds found' % name)
        return 1
    print('%s: %d seed files in %s' % (name, count, corpus), flush=True)

    common = ['-rss_limit_mb=2048', '-timeout=10', '-artifact_prefix=' + artifacts + '/']
    if args.dict:
        common.append('-dict=' + args.dict)
    if args.max_len:
        common.append('-max_len=%d' % args.max_len)
    seeds = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
    # Regression pass: each seed once, on its own.
    try:
        rc = subprocess.call([args.fuzzer] + common + seeds, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, timeout=REPLAY_LIMIT)
    except subprocess.TimeoutExpired:
        print('%s: the seeds did not finish within %d s' % (name, REPLAY_LIMIT))
        return 1
    if rc != 0:
        # Run again with output, so the log shows which seed failed and why.
        subprocess.call([args.fuzzer] + common + seeds)
        print('%s: a seed file fails (exit %d)' % (name, rc))
        return 1
    print('%s: all %d seeds pass; fuzzing for %d s' % (name, count, args.seconds), flush=True)

    cmd = [args.fuzzer] + common + ['-max_total_time=%d' % args.seconds,
                                    '-print_final_stats=1', corpus]
    # libFuzzer stops itself after -max_total_time; this is only a backstop
    # (the Meson test has no timeout of its own).
    limit = args.seconds * 3 // 2 + 120
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, errors='replace', timeout=limit)
    except subprocess.TimeoutExpired as e:
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b'').decode(errors='replace')
        print(out[-4000:])
        print('%s: still running after %d s, stopped' % (name, limit))
        return 1
    out = proc.stdout
    lines = out.splitlines()
    # The progress lines are many; keep the start, the last ones and the stats.
    keep = lines[:12] + ['...'] + lines[-40:] if len(lines) > 60 else lines
    print('\n'.join(keep))
    execs = re.search(r'stat::number_of_executed_units:\s*(\d+)', out)
    cov = re.findall(r'cov: (\d+) ft: (\d+) corp: (\d+)', out)
    summary = '%s: exit %d, %s runs' % (name, proc.returncode, execs.group(1) if execs else '?')
    if cov:
        summary += ', cov %s ft %s, corpus %s' % cov[-1]
    crashes = sorted(os.listdir(artifacts))
    if crashes:
        summary += ', artifacts: ' + ' '.join(os.path.join(artifacts, c) for c in crashes)
    print(summary)
    return 0 if proc.returncode == 0 and not crashes else 1


if __name__ == '__main__':
    sys.exit(main())

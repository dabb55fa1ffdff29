"""Dataset cartography on COGS with a small Transformer trained from scratch (CPU-small defaults).

    python examples/cartography_cogs.py ../shared/data/cogs/train.tsv --num-examples 400 --epochs 6 \
        --out cogs-cartography

Trains a word-level encoder-decoder (BART architecture, random weights) with a stock
``Seq2SeqTrainer`` plus ``CartographyCallback``, then builds the data map (inverse perplexity),
writes ``datamap.png`` and the hard-to-learn 33 % subset as a Hub-layout folder (OOV-repaired
when the sample allows it: a small sample has many words seen once, which a third of it cannot
all hold; then the subset is written without the repair and a note says so).
Paper scale: ``--num-examples 0`` (all 24,155 rows), ``--d-model 512 --layers 3 --epochs 50`` on
a GPU. The helpers here (TSV reading, word vocabulary, tiny model, padding collator) are also
used by ``benchmarks/bench_cartography.py`` and the end-to-end test.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


def read_tsv(path: str, num_examples: int = 0, seed: int = 0) -> list[dict]:
    """COGS-style TSV rows (source, target, category); a seeded sample of ``num_examples`` (0: all)."""
    with open(path, encoding="utf-8") as f:
        rows = [dict(zip(("source", "target", "category"), line.rstrip("\n").split("\t"))) for line in f if line.strip()]
    if num_examples and num_examples < len(rows):
        rows = random.Random(seed).sample(rows, num_examples)
    return rows


def build_vocab(rows: list[dict]) -> dict[str, int]:
    """One shared word vocabulary over sources and targets (specials first, then sorted words)."""
    words = sorted({w for r in rows for col in ("source", "target") for w in r[col].split()})
    return {w: i for i, w in enumerate(SPECIALS + words)}


def encode(rows: list[dict], vocab: dict[str, int]):
    """A ``Dataset`` with input_ids / attention_mask / labels (EOS appended to both sides) and the text."""
    from datasets import Dataset

    def ids(text: str) -> list[int]:
        return [vocab.get(w, UNK) for w in text.split()] + [EOS]

    return Dataset.from_dict({
        "source": [r["source"] for r in rows],
        "target": [r["target"] for r in rows],
        "input_ids": [ids(r["source"]) for r in rows],
        "attention_mask": [[1] * len(ids(r["source"])) for r in rows],
        "labels": [ids(r["target"]) for r in rows],
    })


def tiny_bart(vocab_size: int, *, d_model: int = 64, layers: int = 2, heads: int = 4, dropout: float = 0.1,
              max_len: int = 256, seed: int = 0):
    """A small randomly initialised encoder-decoder (BART architecture)."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(seed)
    cfg = BartConfig(
        vocab_size=vocab_size, d_model=d_model, encoder_layers=layers, decoder_layers=layers,
        encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=4 * d_model,
        decoder_ffn_dim=4 * d_model, max_position_embeddings=max_len, dropout=dropout, attention_dropout=0.0,
        activation_dropout=0.0, pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS, decoder_start_token_id=BOS,
        forced_bos_token_id=None, forced_eos_token_id=None,
    )
    return BartForConditionalGeneration(cfg)


class PadCollator:
    """Right-pads input_ids/attention_mask with PAD and labels with -100."""

    def __init__(self, pad_id: int = PAD):
        self.pad_id = pad_id

    def __call__(self, features: list[dict]) -> dict:
        import torch

        L = max(len(f["input_ids"]) for f in features)
        T = max(len(f["labels"]) for f in features)
        return {
            "input_ids": torch.tensor([f["input_ids"] + [self.pad_id] * (L - len(f["input_ids"])) for f in features]),
            "attention_mask": torch.tensor([f["attention_mask"] + [0] * (L - len(f["attention_mask"])) for f in features]),
            "labels": torch.tensor([f["labels"] + [-100] * (T - len(f["labels"])) for f in features]),
        }


def make_trainer(model, dataset, out: str, *, epochs: int, batch_size: int = 16, lr: float = 1e-3, callbacks=(),
                 seed: int = 0, with_ids: bool = True, **args):
    """A stock ``Seq2SeqTrainer`` (CPU, no logging/saving unless ``args`` says so)."""
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    from hf_synthsample.cartography import CartographyCollator

    kw = dict(output_dir=out, per_device_train_batch_size=batch_size, num_train_epochs=epochs, learning_rate=lr,
              remove_unused_columns=False, report_to=[], save_strategy="no", logging_strategy="no", seed=seed,
              use_cpu=True, disable_tqdm=True, warmup_steps=0)
    kw.update(args)
    collator = PadCollator()
    # the text columns are not model inputs: drop them from the training set (reading them per row costs time)
    drop = ["source", "target"] + ([] if with_ids else ["example_id"])
    dataset = dataset.remove_columns([c for c in drop if c in dataset.column_names])
    if with_ids:
        collator = CartographyCollator(collator)
    return Seq2SeqTrainer(model=model, args=Seq2SeqTrainingArguments(**kw), train_dataset=dataset,
                          data_collator=collator, callbacks=list(callbacks))


def main(argv=None) -> int:
    from hf_synthsample.cartography import CartographyCallback, DataMap, add_example_ids
    from hf_synthsample.hub import write_hub_folder

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("train_tsv", help="COGS train.tsv (or any source<TAB>target TSV)")
    p.add_argument("--num-examples", type=int, default=400, help="rows sampled (0: all) [400]")
    p.add_argument("--epochs", type=int, default=6, help="training epochs [6]")
    p.add_argument("--d-model", type=int, default=64, help="model width [64]")
    p.add_argument("--layers", type=int, default=2, help="encoder and decoder layers [2]")
    p.add_argument("--batch-size", type=int, default=16, help="[16]")
    p.add_argument("--min-epoch", type=int, default=1, help="first epoch of the data-map window [1]")
    p.add_argument("--fraction", type=float, default=0.33, help="subset fraction [0.33]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a small shared CPU) [1]")
    p.add_argument("--out", default="cogs-cartography", help="output folder [cogs-cartography]")
    a = p.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    rows = read_tsv(a.train_tsv, a.num_examples, a.seed)
    vocab = build_vocab(rows)
    ds = add_example_ids(encode(rows, vocab))
    model = tiny_bart(len(vocab), d_model=a.d_model, layers=a.layers, seed=a.seed)
    cb = CartographyCallback(measures=("inv_ppl", "chia"))
    make_trainer(model, ds, a.out, epochs=a.epochs, batch_size=a.batch_size, callbacks=[cb], seed=a.seed).train()
    dm = DataMap.from_dynamics(os.path.join(a.out, "cartography"), "inv_ppl", min_epoch=a.min_epoch)
    print(dm.summary(a.fraction))
    print("plot:", dm.plot(os.path.join(a.out, "datamap.png")))
    try:
        subset = dm.subset(ds, "hard-to-learn", a.fraction, oov_columns=["source", "target"])
    except ValueError as err:
        print(f"no OOV repair: {err}")
        subset = dm.subset(ds, "hard-to-learn", a.fraction)
    folder = write_hub_folder(os.path.join(a.out, "hard-to-learn"), {"hard_to_learn": subset.remove_columns(
        ["input_ids", "attention_mask", "labels"])}, body="# COGS hard-to-learn subset (inv_ppl)\n",
        if_exists="overwrite")
    print(f"subset: {len(subset)} rows -> {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

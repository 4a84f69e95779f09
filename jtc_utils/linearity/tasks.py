"""Two classification tasks that the generated world poses honestly, and fine-tuning on them (the paper's Table 1
fine-tunes on SuperGLUE tasks posed as binary classification; related-systems spec 4.3).

* ``fact``: is this sentence true of the world, or has one of its fact words (a birthplace, a river, an occupation,
  a nationality ...) been swapped for another word of the same class? Only a model that recalls the fact can tell.
* ``domain``: is this an encyclopedia sentence or a news sentence?

Examples come from the experiment pools (never from the models' training text): train split for fine-tuning,
validation split for the reported accuracy. Half of the examples of each task are positive.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from functools import lru_cache

import numpy as np

from jtc_utils.core.infra import device as devices
from jtc_utils.core.models import models
from jtc_utils.core.models.batching import pad_id, right_pad
from jtc_utils.embedded import corpus, lexicon
from jtc_utils.training import loop

from . import score, states

SWAPPABLE = ("city", "country", "country adjective", "river", "occupation", "currency", "first name", "surname")


@lru_cache(maxsize=2)
def _class_words(seed: int = 0) -> dict:
    """{class: sorted words} for the swappable classes of the world of ``seed``."""
    names, template = lexicon.word_lists(seed)
    out = defaultdict(set)
    for word, cls in [*names.items(), *template.items()]:
        if cls in SWAPPABLE:
            out[cls].add(word)
    return {c: sorted(w) for c, w in out.items()}


def corrupt(sentence: corpus.Sentence, rng: random.Random, seed: int = 0) -> str | None:
    """The sentence with one of its fact words swapped for another word of the same class (None if it has none)."""
    words = _class_words(seed)
    options = []
    for a, b, lab in sentence.spans:
        if lab == "fact":
            cls = lexicon.word_class(sentence.text[a:b], lab, seed)
            if cls in words and len(words[cls]) > 1:
                options.append((a, b, cls))
    if not options:
        return None
    a, b, cls = rng.choice(options)
    old = sentence.text[a:b]
    new = rng.choice([w for w in words[cls] if w != old])
    return sentence.text[:a] + new + sentence.text[b:]


def examples(task: str, split: str, n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``n`` (text, label) pairs of ``task`` from the ``split`` pools, balanced, in a seeded order."""
    if task not in ("fact", "domain"):
        raise ValueError(f"unknown task {task!r}; the tasks are 'fact' and 'domain'")
    rng = random.Random(f"sl-task/{task}/{split}/{seed}")
    pools = {d: corpus.pool(d, split) for d in corpus.DOMAINS}
    texts, labels = [], []
    if task == "domain":
        for i in range(n):
            d = corpus.DOMAINS[i % 2]
            texts.append(rng.choice(pools[d]).text)
            labels.append(i % 2)
    else:
        with_facts = [s for d in corpus.DOMAINS for s in pools[d] if any(lab == "fact" for *_, lab in s.spans)]
        while len(texts) < n:
            s = rng.choice(with_facts)
            if len(texts) % 2 == 0:
                texts.append(s.text)
                labels.append(1)
            else:
                bad = corrupt(s, rng)
                if bad is not None:
                    texts.append(bad)
                    labels.append(0)
    order = list(range(n))
    rng.shuffle(order)
    return [texts[i] for i in order], np.asarray([labels[i] for i in order])


class Classifier:
    """A GPT-2 body with a linear head on its last real token (after ``ln_f``)."""

    def __init__(self, lm, n_classes: int = 2):
        import torch

        self.lm = lm
        self.head = torch.nn.Linear(lm.config.n_embd, n_classes).to(devices.of(lm))  # drawn on the CPU

    def parameters(self):
        return [*self.lm.base_model.parameters(), *self.head.parameters()]

    def __call__(self, inp, att):
        import torch

        dev = devices.of(self.lm)
        inp, att = inp.to(dev), att.to(dev)
        h = self.lm.base_model(input_ids=inp, attention_mask=att).last_hidden_state  # through the final norm
        last = att.sum(1) - 1
        return self.head(h[torch.arange(len(inp), device=dev), last])


def _batch(tok, texts):

    return right_pad([tok(t, add_special_tokens=False)["input_ids"] for t in texts], pad_id(tok))


def accuracy(clf: Classifier, tok, texts, labels, batch: int = 128) -> float:
    import torch

    correct = 0
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            inp, att = _batch(tok, texts[i : i + batch])
            correct += int((clf(inp, att).argmax(-1).cpu().numpy() == labels[i : i + batch]).sum())
    return correct / len(texts)


def finetune(task: str, seed: int, steps: int, batch: int, lr: float, n_val: int = 1000, progress: bool = True) -> dict:
    """Fine-tune ``zoo/tiny-gpt2`` on ``task`` (all weights and the head; AdamW, linear warm-up over the first 10% of
    steps then constant) and return its record: the accuracy on ``n_val`` validation examples, and the linearity
    without residual of every layer pair before and after, on the paper's protocol (every token of the same
    validation text)."""
    import torch

    torch.manual_seed(seed)
    lm, tok = models.load("tiny-gpt2")
    before_ad = models.Adapter(model=lm, tokenizer=tok, name="tiny-gpt2")
    seqs = states.sentence_ids(before_ad, "validation")
    before = states.extract(before_ad, seqs)["X"]
    clf = Classifier(lm)
    texts, labels = examples(task, "train", steps * batch, seed)
    vt, vl = examples(task, "validation", n_val, 0)
    opt = torch.optim.AdamW(clf.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    lm.train()
    t0 = time.time()
    losses = []

    def step(i: int) -> None:
        inp, att = _batch(tok, texts[i * batch : (i + 1) * batch])
        logits = clf(inp, att)
        y = torch.as_tensor(labels[i * batch : (i + 1) * batch]).to(logits.device)
        loss = torch.nn.functional.cross_entropy(logits, y)
        loop.optimiser_step(loss, clf.parameters(), opt, sched, 1.0)
        losses.append(round(loss.item(), 4))

    loop.loop(steps, 0, step, desc=f"fine-tune {task} seed {seed}", progress=progress)
    train_time = time.time() - t0
    lm.eval()
    after = states.extract(models.Adapter(model=lm, tokenizer=tok, name="fine-tuned"), seqs)["X"]
    nb = [score.score(before[i], before[i + 1] - before[i]) for i in range(len(before) - 1)]
    na = [score.score(after[i], after[i + 1] - after[i]) for i in range(len(after) - 1)]
    delta = np.subtract(na, nb)
    return {
        "task": task,
        "seed": seed,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "val_accuracy": round(accuracy(clf, tok, vt, vl), 4),
        "loss_curve": losses,
        "nores_before": [round(x, 6) for x in nb],
        "nores_after": [round(x, 6) for x in na],
        "delta_nores": [round(float(x), 6) for x in delta],
        "delta_nores_mean": round(float(delta.mean()), 6),
        "tokens": int(before.shape[1]),
        "train_time_s": round(train_time, 1),
    }

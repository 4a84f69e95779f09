"""How ``tuned_s0.safetensors`` beside this file was trained: on a lent GPU machine (NVIDIA H100) that had
PyTorch but neither this book's packages nor the network, so the usual command

    python -m jtc_utils.lenses.train --models smollm2-135m --real-tuned --device cuda

could not run there as it is. This script does the same steps with the same library functions: it rebuilds
SmolLM2-135M from the package's GGUF (``real_models.convert_gguf``), extracts the hidden states of the book's 9,000
Wikipedia training samples there in float32 (``hidden``; the samples were pickled here, with the first 64 states of
this book's CPU extraction to compare against), trains the tuned lens with the published recipe and the convergence
check (``lenses.tuned.train``) and writes the maps in pieces of at most 16 MB. Back here the pieces were stored
with ``lenses.artifacts.store`` under the key the lens chapter computes (``lenses.registry._key``), with a card that
says where it was trained. Usage there: ``python3 train_on_gpu.py model.gguf [quick]`` from the repository root,
with ``.dev/samples.pkl``, ``.dev/X_head.npy`` and ``.dev/sha`` made by the preparation step.
"""
import hashlib, json, os, pickle, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, os.getcwd())
import torch
from jtc_utils import device as devices, models, real_models
from jtc_utils.hidden import _extract
from jtc_utils.lenses import tuned

OUT = Path(os.environ.get("OUT", "/tmp/out")); OUT.mkdir(exist_ok=True, parents=True)
G = Path(sys.argv[1]); quick = len(sys.argv) > 2
log = {"torch": torch.__version__, "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"}
g = G.read_bytes(); assert hashlib.sha256(g).hexdigest() == Path(".dev/sha").read_text().strip(), "gguf damaged"
t = time.perf_counter()
dev = devices.use("cuda" if torch.cuda.is_available() else "cpu")
hf = Path(os.environ.get("HF_DIR", "/root/hf"))
if not (hf / "model.safetensors").exists():
    real_models.convert_gguf(G, hf, progress=False)
log["convert_s"] = time.perf_counter() - t
ad = models.adapter(str(hf))
S = pickle.load(open(".dev/samples.pkl", "rb"))
if quick:
    import dataclasses
    S = dataclasses.replace(S, texts=S.texts[:64], input_ids=S.input_ids[:64], positions=S.positions[:64],
                            labels=S.labels[:64], target_labels=None if S.target_labels is None else S.target_labels[:64])
t = time.perf_counter()
X = _extract(ad, S, 32, False)
log["extract_s"] = time.perf_counter() - t
ref = np.load(".dev/X_head.npy")
dx = np.abs(X[:, :64] - ref); log["max_abs_diff_vs_cpu"] = float(dx.max())
log["max_rel_diff_vs_cpu"] = float((dx / (np.abs(ref) + 1e-3)).max())
print(json.dumps(log), flush=True)
with torch.no_grad():
    for p in ad.model.parameters():
        p.data = p.data.clone()  # moved to the GPU inside inference mode: a normal tensor for autograd
        p.requires_grad_(False)
recipe = {"steps": 4, "batch": 16, "max_steps": 8} if quick else None
t = time.perf_counter()
r = tuned.train(X, ad.readout, "tuned", None, 0, recipe=recipe, progress=False)
if torch.cuda.is_available():
    torch.cuda.synchronize()
log["train_s"] = time.perf_counter() - t
log.update(steps=int(r["steps"]), doublings=int(r["doublings"]), improvement=float(r["improvement"]))
M = r["M"].astype(np.float32)
for i in range(0, M.shape[0], 10):
    np.save(OUT / f"M{i:02d}.npy", M[i:i + 10])
np.savez(OUT / "rest.npz", c=r["c"].astype(np.float32), log=r["log"], steps=r["steps"], doublings=r["doublings"],
         improvement=r["improvement"])
(OUT / "log.json").write_text(json.dumps(log))
print(json.dumps(log), flush=True)

# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A page for the grader's tests
#
# Two of the book's exercises on a page that executes in a second: one checked against the numbers of a figure the
# page computes and saves (`ex-sec3-one-pair`, `fig23`), one against numbers the page passes to the check
# (`ex-world-check`).

# %% tags=["parameters"]
scale = 1.0

# %%
import json

import numpy as np

from jtc_utils.book.display import exercises
from jtc_utils.evidence import figdata

# this run's r² differ from the book's in the third digit, as a run on another machine differs in the last ones: the
# checks compare the answers with the numbers of this run
r2 = figdata.as_array(figdata.load("fig23")["data"]["r2_mat"]) * (1 + 1e-3)
# (written as figdata.save writes it, without the versions of the environment, whose imports cost seconds)
figdata.output_dir().mkdir(parents=True, exist_ok=True)
(figdata.output_dir() / "fig23.json").write_text(json.dumps({"figure": "fig23", "data": {"r2_mat": r2.tolist()}}))
check = {"mat": np.array([0.2, 0.5, 0.9, 1.0]) * scale, "id": np.array([0.1, 0.6, 0.4, 1.0]) * scale}

# %% [markdown]
# ```{exercise-start}
# :label: ex-sec3-one-pair
# ```
# The r² of casting layer 2 to layer 4 with `mat`.
# ```{exercise-end}
# ```

# %% tags=["solution"]
answer = float(r2[2, 4])

# %% tags=["nbval-check-output"]
exercises.check("ex-sec3-one-pair", answer)

# %% [markdown]
# ```{exercise-start}
# :label: ex-world-check
# ```
# At how many layers before the last is `mat` above `id`?
# ```{exercise-end}
# ```

# %% tags=["solution"]
answer = int((check["mat"] > check["id"])[:-1].sum())

# %% tags=["nbval-check-output"]
exercises.check("ex-world-check", answer, data={"check": {"mat": list(check["mat"]), "id": list(check["id"])}})

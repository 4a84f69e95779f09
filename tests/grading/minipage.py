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
# Two of the book's exercises on a page that executes in a second: one checked against the stored numbers of a
# figure (`ex-sec3-one-pair`, `book/data/fig23.json`), one against numbers the page computes and passes to the check
# (`ex-world-check`).

# %% tags=["parameters"]
scale = 1.0

# %%
import numpy as np

from jtc_utils import exercises, figdata

r2 = figdata.as_array(figdata.load("fig23")["data"]["r2_mat"])
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

import os

os.environ.setdefault("JTC_PROGRESS", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

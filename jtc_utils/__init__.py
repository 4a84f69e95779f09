"""The executable reproduction of "Jump to Conclusions" and three papers around it, in layers that import one way:
``base`` and ``embedded``, the ``core``, ``training`` and ``evidence``, the four papers side by side (``jtc``,
``lenses``, ``ffn``, ``linearity``), and the ``book`` on top, which reaches the papers through one registry."""

"""Layer 1 of Farkle: the compiled model and the kernels every solver and simulation reads.

* :mod:`.model`: a rule set compiled once into arrays (:class:`~.model.Model`);
* :mod:`.turn`: one roll step, one backward turn DP, one forward pass over a turn's ends;
* :mod:`.game`: one sweep over two players' states, each seat optimal or fixed.

Pure and jitted: no I/O, no caches, no user errors beyond what the arrays say.
"""

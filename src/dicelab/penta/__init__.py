"""Penta, the 13-box game (RULES.md §1): rules, exact solver, policies, simulation.

Layers, data flowing one way:

* kernels and data: :mod:`~dicelab.penta.rules` (the model: boxes, points, bonuses, the
  state index, named rule sets), :mod:`~dicelab.penta.tables` (roll/keep index tables
  over :mod:`dicelab.dice` ranks), :mod:`~dicelab.penta.scoring` (box scores, joker,
  bonuses, what a box entry does to a card; ``TABLES``, the kernels' static tables),
  :mod:`~dicelab.penta.widget` (one turn, given the values of later states);
* solver, policies, runner: :mod:`~dicelab.penta.solver` (backward DP + disk cache),
  :mod:`~dicelab.penta.policies` (``optimal``/``greedy``, ``rank_options``, decision
  tables), :mod:`~dicelab.penta.simulate` (``simulate_penta`` -> ``PentaResult`` of
  ``PentaSeat`` summaries; ``play_scripted``: the same kernel on given dice).

See ``docs/penta.md``.
"""

"""Self-instruct for the tool specialists: (request -> calls) pairs, kept only when the calls work.

The routing demonstrations of :mod:`agentlab.selfinstruct` are requests alone; a specialist that
acts through a typed toolkit (:mod:`agentlab.toolkits`) also needs to learn *which call, with
which values*. Each domain module here synthesizes a random small start state (a workbook, a
document, a deck, some files, a settings file, pictures) and a request about it in varied
wording, with the calls that carry it out. :mod:`.build` keeps a pair only when

- the calls can be decoded at all under the agent's grammar (every argument is one of the
  candidates the request and the workspace offer, and the tool is among the ones retrieved for
  the request), so the adapter never learns a reply it could not produce;
- running them through the real toolkit on the start state raises nothing and a postcondition
  on the resulting files holds;
- the request is no near-copy of an evaluation task (:mod:`.leakage`).

:mod:`.fit` then trains one small LoRA adapter per specialist on the ToolAgent's own prompt.
"""

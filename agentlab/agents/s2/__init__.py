"""Agent S2 (runner ``s2``): a Manager plans subgoals, a Worker acts on one subgoal at a time in
semantic terms, and a mixture of grounding experts (visual, textual, structural) turns each
semantic action into desktop actions or a direct spreadsheet write. See ``docs/agents/s2.md``."""

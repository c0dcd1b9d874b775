"""What a run folder records about itself, shared by every kind of run (``agentlab exec`` and
self-instruct): its manifest (what produced it), its budget (when it stopped starting work) and its
reruns (which rows were run again). One floor below the run layer so self-instruct can write the
same manifest without depending on the episode kernel."""

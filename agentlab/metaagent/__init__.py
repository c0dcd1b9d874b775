"""The MetaAgent: routers that pick agents from the pool (AgentToken and baselines) and the hash-manager.

Heavy modules (torch training, checkpoints) are imported by name where needed; this package
root only exposes the light shared interfaces.
"""

from agentlab.metaagent.data import TrainingSet, load_training_set
from agentlab.metaagent.manager import HashManager, parse_plan
from agentlab.tasks.decisions import PlanStep, RouteResult
from agentlab.metaagent.router import ROUTERS, Router, RunOptions, router_class

__all__ = [
    "ROUTERS",
    "HashManager",
    "PlanStep",
    "RouteResult",
    "Router",
    "RunOptions",
    "TrainingSet",
    "load_training_set",
    "parse_plan",
    "router_class",
]

"""Assemble benchmarks/RESULTS.md from the per-benchmark outputs in benchmarks/results/.

Each benchmark script writes its latest output, with the exact command that produced it,
to ``benchmarks/results/<name>.md``; this script only concatenates them in a fixed order so
RESULTS.md is never edited by hand (and never holds a number no script printed).

    python benchmarks/collect_results.py
"""

from __future__ import annotations

from pathlib import Path

ORDER = [
    "routing", "backbones", "routing_smollm2-135m-instruct", "routing_gemma3-270m", "routing_lda_smollm2-135m-instruct",
    "routing_lda_gemma3-270m", "routing_device_lda_smollm2-135m-instruct", "routing_device_lda_gemma3-270m",
    "routing_store_lda_smollm2-135m-instruct", "routing_store_lda_gemma3-270m", "routing_store_device_lda_smollm2-135m-instruct",
    "routing_store_device_lda_gemma3-270m",
    "routing_heldout_smollm2-135m-instruct_table", "routing_heldout_gemma3-270m_table",
    "routing_heldout_smollm2-135m-instruct_seed", "routing_heldout_gemma3-270m_seed", "two_app_plans", "generalist_fallback",
    "generalist_fallback_agenttoken", "two_app_detection", "routing_baselines", "route_latency", "agenttoken_tuning", "training_cost", "pool_scale", "multi_agent", "multi_agent_endpoint", "multi_agent_plans", "multi_agent_gold", "multi_agent_gold_fullrequest", "multi_agent_executed", "multi_agent_executed_clauses", "multi_agent_executed_agenttoken", "multi_agent_executed_cola", "manager_mode",
    "selfinstruct", "data_size", "execution_acc", "execution", "scale", "ray_speedup", "desktop_agents", "desktop_enrolment",
    "heldout", "heldout_slots", "heldout_prior", "heldout_tasks", "heldout_tasks_prior", "specialist_adapters",
    "heldout_v2", "specialist_two_ops", "specialist_best_of", "grammar_engine", "slots_numbers", "heldout_v2_friday",
    "word_prior", "desktop_file_route", "check_done", "heldout_v2_check", "app_specialists", "app_specialists_adapters",
    "heldout_v2_apps", "check_done_settings", "heldout_v2_settings", "relative_paths", "heldout_v2_paths", "heldout_v2_r4", "prior_weight", "heldout_v2_pw3",
    "heldout_v2_r5", "heldout_v2_r6", "heldout_v2_r7", "desktop_file_route_v2", "phone_docs", "phone_heldout", "phone_heldout2", "gui_route_web", "desktop_heldout_pcagent", "desktop_heldout_s2", "gui_route_heldout",
    "gui_route_dev", "check_asks", "heldout_v2_r8", "heldout_v2_r9",
    "table1", "table1_ray", "table1_growth", "table1_v3",
]
HEADER = """# Benchmark results

Measured on this project's development machine (2 CPU cores, no GPU) unless a section says
otherwise. Every figure below was printed by the command shown with it; ratios were measured
side by side in one run. Regenerate a section by re-running its command (each script rewrites
its own file under `benchmarks/results/`), then `python benchmarks/collect_results.py`.
`make bench` runs every script in `--quick` mode.

"""


def main() -> None:
    here = Path(__file__).resolve().parent
    parts = {p.stem: p for p in sorted((here / "results").glob("*.md"))}
    names = [n for n in ORDER if n in parts] + sorted(n for n in parts if n not in ORDER)
    body = "\n\n".join(parts[n].read_text().strip() for n in names)
    tmp = here / "RESULTS.md.tmp"
    tmp.write_text(HEADER + body + "\n")
    tmp.replace(here / "RESULTS.md")
    print(f"wrote {here / 'RESULTS.md'} from {len(names)} result file(s): {', '.join(names)}")


if __name__ == "__main__":
    main()

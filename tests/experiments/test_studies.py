"""Every study notebook 04 and the benchmarks call, on tiny sizes with the real models."""

from __future__ import annotations

import math

import pytest

from agentlab.errors import ConfigError
from agentlab.experiments import data_size, manager_mode, pool_growth, routing_table
from agentlab.experiments.routing_data import RoutingData, load_routing_data, single_app_tasks
from agentlab.eval import public_lists

needs_lists = pytest.mark.skipif(not public_lists.available(), reason=public_lists.absent_reason())

AGENTS = ["SheetAgent", "WriterAgent", "ClockAgent"]


@pytest.fixture(scope="module")
def small(pool):
    return pool.subset(AGENTS)


@pytest.fixture(scope="module")
def data(small) -> RoutingData:
    return load_routing_data(small, per_agent=3, lm_per_agent=1, max_eval_tasks=6, lm_eval_tasks=2, seed=0)


@needs_lists
def test_routing_data_is_seeded_and_sized(small, data):
    domains = {a.domain for a in small}
    assert len(data.tasks) == 6 and data.lm_tasks == data.tasks[:2]
    assert all(t.domain in domains for t in data.tasks)
    assert set(data.tasks) <= set(single_app_tasks(small))
    again = load_routing_data(small, per_agent=3, lm_per_agent=1, max_eval_tasks=6, lm_eval_tasks=2, seed=0)
    assert [t.id for t in again.tasks] == [t.id for t in data.tasks]
    assert data.train_for("lora") is data.lm_train and data.train_for("agenttoken") is data.train
    assert data.tasks_for("icl") == data.lm_tasks and data.tasks_for("embedding") == data.tasks
    assert len(data.train) == 9 and len(data.lm_train) == 3


def test_routing_table_options_are_the_same_door_for_every_router():
    cfg = routing_table.RoutingTableConfig(router_options={"lora": {"epochs": 1, "use_cache": True}})
    assert cfg.options_for("embedding") == {"progress": False}
    assert cfg.options_for("prompt") == {"progress": False, "use_cache": False}  # a real fit is measured
    assert cfg.options_for("lora") == {"progress": False, "use_cache": True, "epochs": 1}  # configured options win
    with pytest.raises(ValueError):
        routing_table.RoutingTableConfig(routerz=["x"])


def test_routing_table_measures_each_router(small, data):
    table = routing_table.run(small, data, routing_table.RoutingTableConfig(
        routers=["embedding", "agenttoken"], router_options={"agenttoken": {"train": {"epochs": 5}, "max_word_tokens": 1}}))
    assert [m.router for m in table.rows] == ["embedding", "agenttoken"]
    assert set(table.fitted) == {"embedding", "agenttoken"}
    acc, n = table.accuracy(), table.counts()
    for kind in ("embedding", "agenttoken"):
        assert 0.0 <= acc[kind]["overall"] <= 1.0 and n[kind]["overall"] == len(data.tasks)
        assert sum(v for d, v in n[kind].items() if d != "overall") == len(data.tasks)
    rows = table.table_rows()
    assert rows[0]["trainable params"] == 0 and rows[1]["trainable params"] == 3 * 576  # W_A: agents x hidden size
    assert rows[1]["train examples"] == 9 and rows[1]["fit s"] >= 0
    m = table.rows[1]
    assert len(m.results) == len(data.tasks) and [r.agent for r in m.results].count(None) == m.report.failures
    assert m.fit_metrics["seconds"] >= 0 and "seconds" in table.rows[0].fit_metrics
    frame = table.to_frame()
    assert list(frame.index) == ["embedding", "agenttoken"] and "route s/task" in frame.columns


def test_pool_growth_curves_and_coverage(small, data):
    cfg = pool_growth.PoolGrowthConfig(router="embedding", points=[1, 9], random_orders=2, per_agent=2)
    growth = pool_growth.run(small, data.tasks, cfg)
    assert growth.points == [1, 3]  # capped at the pool size
    assert list(growth.accuracy) == ["random (seed 0)", "random (seed 1)", "GUI first", "CLI first"]
    assert growth.fits == 4 * 2 and growth.random_accuracy().shape == (2, 2)
    for name, acc in growth.accuracy.items():
        cov = growth.coverage[name]
        assert all(a <= c + 1e-9 for a, c in zip(acc, cov))  # accuracy never beats coverage
        assert cov[-1] == 1.0  # the whole pool serves every task's domain
    from agentlab.viz.experiments import pool_growth_figure

    fig = pool_growth_figure(growth)
    names = [t.name for t in fig.data]
    assert "random order (mean ± std)" in names and "coverage, CLI first" in names
    with pytest.raises(ConfigError):
        pool_growth.run(small, data.tasks, cfg.model_copy(update={"router": "oracle"}))


def test_data_size_points_and_frame(small, data):
    cfg = data_size.DataSizeConfig(routers=["embedding"], sizes=[1, 3])
    result = data_size.run(small, data.tasks, cfg)
    assert [(p.size, p.router, p.examples) for p in result.points] == [(1, "embedding", 3), (3, "embedding", 9)]
    assert list(result.curves()) == ["embedding"] and len(result.curves()["embedding"]) == 2
    frame = result.to_frame()
    assert list(frame.columns) == ["embedding"] and len(frame) == 2
    # ``rank`` reads the top-1 of the ranking: for the embedding router that is its answer.
    ranked = data_size.run(small, data.tasks, cfg.model_copy(update={"decide": "rank"}))
    assert ranked.curves() == result.curves()


def test_equal_size_sets_match_per_agent(small, tmp_path):
    from agentlab.paths import data_dir

    demos = data_dir() / "demos"
    if not (demos / "candidates").exists():
        pytest.skip("no shipped candidates in data/demos")
    sets, ks = data_size.equal_size_sets(small, demos)
    assert set(sets) == {"filtered", "unfiltered"}
    assert len(sets["filtered"]) == len(sets["unfiltered"])
    for i, doc in enumerate(small.agents):
        n = sets["filtered"].labels.count(i)
        assert n == len(doc.demonstrations) + ks[doc.name] == sets["unfiltered"].labels.count(i)


@needs_lists
def test_manager_mode_plans_and_recall(small, data, backend):
    multi = manager_mode.multi_app_tasks(small)
    domains = {a.domain for a in small}
    assert multi and all(set(t.domains) <= domains for t in multi)
    cfg = manager_mode.ManagerModeConfig(routers=["embedding"], tasks=1, k=1, max_new_tokens=4, recall_ks=[1, 3])
    result = manager_mode.run(small, multi[:3], backend, cfg, train=data.train)
    (row,) = result.rows
    assert row.router == "embedding" and row.tasks == len(multi[:3]) and len(row.planned) == 1 and len(row.plans) == 1
    assert set(row.recall) == {1, 3} and row.recall[3] == 1.0  # all 3 agents are in the top 3
    assert 0.0 <= row.agent_match <= 1.0 and not math.isnan(row.seconds_per_plan)
    assert {"top-1 recall", "top-3 recall", "AgentMatch", "plans failed"} <= set(result.to_frame().columns)
    with pytest.raises(ConfigError, match="not fitted"):
        manager_mode.run(small, multi[:1], backend, cfg)


@needs_lists
def test_tuning_rows_reference_first_and_markdown(pool, backend):
    from agentlab.experiments.tuning import TuningConfig, run, train_grid

    cfg = TuningConfig(chat=[False], grid="train", per_agent=1, max_eval_tasks=4, progress=False)
    study = run(cfg, backend=backend, pool=pool.subset(AGENTS))
    ref, tuned = study.rows[0], study.rows[1:]
    assert ref["method"].startswith("minilm-centroid") and study.train_examples == 3
    assert len(tuned) == len(train_grid("train"))  # the final hidden state x the training grid
    assert all(r["layer"] == "final" and r["chat"] is False for r in tuned)
    assert all(0.0 <= r["osworld"] <= 1.0 and 0.0 <= r["appagent_agent_wins"] <= 1.0 for r in tuned)
    md = study.to_markdown()
    assert md.count("\n") == 2 + len(study.rows) and "| metaagent/router_agenttoken | no | final | last | default |" in md
    assert study.best() in tuned and study.as_json()["rows"] == study.rows


def test_pool_scale_grows_with_distractors(pool, data):
    from agentlab.experiments import pool_scale

    big = pool_scale.grown_pool(pool, len(pool) + 3)
    assert big.names[: len(pool)] == pool.names and big.names[-1] == "Synth0002Agent"
    assert {big.get(n).domain for n in big.names[len(pool):]} == {"synthetic"}
    assert pool_scale.grown_pool(pool, 3).names == pool.names[:3]  # ICL's fit limit below the real pool
    res = pool_scale.run(pool, data.tasks[:2], [], pool_scale.PoolScaleConfig(sizes=[len(pool), len(pool) + 2]))
    assert set(res.agenttoken) == {len(pool), len(pool) + 2} and res.icl == {}
    assert res.latency_ratio() > 0 and all(0.0 <= a.acc <= 1.0 for a in res.agenttoken.values())
    fit0, tokens0 = res.icl_max_agents[0]
    # the paper's 30 agents fit whole; the 36-agent store's documents fit only in their brief form
    assert 30 <= fit0 < len(pool) and tokens0 <= res.context_length - res.reserve_tokens
    # at the real pool's size the rebuilt router answers as the checkpoint does (rows keep the checkpoint's order)
    from agentlab.metaagent.agenttoken import AgentTokenRouter

    shipped = AgentTokenRouter.load(res.checkpoint, pool, use_cache=False, progress=False)
    assert res.agenttoken[len(pool)].chosen == [r.agent for r in shipped.route([t.instruction for t in data.tasks[:2]])]


@needs_lists
def test_routing_table_scores_the_project_set_by_domain_and_by_agent(small):
    data = load_routing_data(small, per_agent=3, lm_per_agent=1, max_eval_tasks=4, lm_eval_tasks=2, seed=0,
                             documents=True, project=True)
    domains = {a.domain for a in small}
    assert data.project and all(t.domain in domains and t.gold_agents for t in data.project)
    assert len(data.project_for("icl")) == 2 and data.project_for("embedding") == data.project
    assert len(data.train) > 9  # the document requests were added to the 3 x 3 demonstrations
    table = routing_table.run(small, data, routing_table.RoutingTableConfig(routers=["embedding"]))
    m = table.rows[0]
    assert m.project is not None and m.project.agent is not None and len(m.project.results) == len(data.project)
    dom, agent = table.project_accuracy(), table.project_accuracy("agent")
    assert 0 <= agent["embedding"]["overall"] <= dom["embedding"]["overall"] <= 1  # right agent implies right domain
    assert table.project_counts()["embedding"]["overall"] == len(data.project)
    row = table.interface_rows()[0]
    assert row["tasks"] == len(data.project) and row["agent accuracy"] == round(agent["embedding"]["overall"], 3)
    from agentlab.viz import accuracy_heatmap

    fig = accuracy_heatmap(table.project_accuracy("agent"), table.project_counts(), title="agent level")  # notebook 04's cell
    assert fig.layout.title.text == "agent level"


def test_without_the_lists_the_routing_studies_run_on_the_project_set(small, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AGENTLAB_BENCHMARKS", str(tmp_path / "none"))
    data = load_routing_data(small, per_agent=3, lm_per_agent=1, max_eval_tasks=6, lm_eval_tasks=2, seed=0)
    assert len(data.tasks) == 6 and {t.benchmark for t in data.tasks} == {"project-v2"}
    assert all(t.domain in {a.domain for a in small} for t in data.tasks)
    line = capsys.readouterr().out.strip()
    assert line.startswith("skipped: the routing studies on the 313 OSWorld and AppAgent tasks")
    assert "judged on the project's routing set instead" in line and "`agentlab benchmarks fetch`" in line


"""Prices: the table, the config file, and what a run cost."""

from __future__ import annotations

import io
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from tests.support.chat_server import ChatServer, finish, stream_reply, text_chunks, usage_chunk
from workbench.agent.types import Usage
from workbench.cli.headless import run_headless
from workbench.pricing import BUILTIN, Price, PriceTable, format_cost, load_prices
from workbench.providers.settings import OpenAISettings
from workbench.runtime import RunOptions, build_runtime
from workbench.sessions.export import export
from workbench.sessions.reader import read_session
from workbench.view.fold import ViewState
from workbench.view.summary import CostMeter, summarize

USAGE = Usage(input=1_000, cache_read=2_000, output=500)


def test_a_price_charges_input_cached_and_output_per_million() -> None:
    assert Price(input=2.5, output=10, cached=1.25).cost(USAGE) == pytest.approx(0.01)
    assert Price(input=2, output=0).cost(USAGE) == pytest.approx(0.006)  # cached at the input price


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", BUILTIN["gpt-4o"]),
        ("gpt-4o-mini", BUILTIN["gpt-4o-mini"]),
        ("gpt-4o-2024-08-06", BUILTIN["gpt-4o"]),  # a dated snapshot
        ("gpt-4o-mini-2024-07-18", BUILTIN["gpt-4o-mini"]),
        ("qwen3:8b", None),
        ("gpt-4o-custom", None),  # not a snapshot: no guess
    ],
)
def test_builtin_prices(model: str, expected: Price | None) -> None:
    assert PriceTable().price_of(model) == expected


def test_the_config_overrides_by_exact_id_then_longest_pattern() -> None:
    table = PriceTable(
        configured={
            "gpt-4o": Price(input=1, output=1),
            "qwen3:*": Price(input=0, output=0),
            "qwen3:8b*": Price(input=0.1, output=0.2),
        }
    )
    assert table.price_of("gpt-4o") == Price(input=1, output=1)
    assert table.price_of("qwen3:8b-q4") == Price(input=0.1, output=0.2)
    assert table.price_of("qwen3:30b") == Price(input=0, output=0)
    assert table.price_of("gpt-4o-mini") == BUILTIN["gpt-4o-mini"]


def test_unknown_stays_unknown_and_the_scripted_model_is_free() -> None:
    table = PriceTable()
    assert table.cost("local-model", USAGE) is None
    assert table.total([("openai", "gpt-4o", USAGE), ("openai", "local-model", USAGE)]) is None
    assert table.cost("gpt-4o", USAGE, provider="scripted") == 0
    assert [format_cost(c) for c in (None, 0, 0.00123, 0.123, 12.3)] == [
        "unknown",
        "$0",
        "$0.0012",
        "$0.123",
        "$12.30",
    ]


def test_prices_come_from_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'default_profile = "x"\n[prices."my-model"]\ninput = 1.0\noutput = 3.0\ncached = 0.5\n'
    )
    assert load_prices(config).price_of("my-model") == Price(input=1, output=3, cached=0.5)
    assert load_prices(tmp_path / "missing.toml").configured == {}
    config.write_text('[prices."my-model"]\ninput = -1\noutput = 3\n')
    with pytest.raises(ValueError, match="Bad price for 'my-model'"):
        load_prices(config)
    config.write_text('[prices."my-model"]\ninput = 1\noutput = 3\nouput = 2\n')
    with pytest.raises(ValueError, match="ouput"):
        load_prices(config)


def priced_run(tmp_path: Path, session: Path | None = None) -> tuple[str, object]:
    with ChatServer() as server:
        server.script(
            stream_reply([*text_chunks("one"), finish(), usage_chunk(3_000, 500, cached=2_000)]),
            stream_reply([*text_chunks("two"), finish(), usage_chunk(1_000, 1_000)]),
        )
        settings = OpenAISettings(base_url=server.url, model="my-model", max_retries=0)
        prices = PriceTable(configured={"my-model": Price(input=1, output=2, cached=0.5)})
        runtime = build_runtime(
            RunOptions(
                workspace=tmp_path,
                provider_settings=settings,
                prices=prices,
                record=session is not None,
                session=session,
            )
        )
        out = io.StringIO()
        console = Console(file=out, width=200, highlight=False, color_system=None)
        anyio.run(run_headless, runtime, "first", console)
        anyio.run(run_headless, runtime, "second", console)
        return out.getvalue(), runtime


# 1,000 in at $1 + 2,000 cached at $0.5 + 500 out at $2 = $0.003; then 1,000 + 1,000 = $0.003
FIRST, SECOND = 0.003, 0.003


def test_headless_prints_each_replys_cost_and_the_runs(tmp_path: Path) -> None:
    log, _runtime = priced_run(tmp_path)
    first_run = log[: log.index("end: ")]
    assert "tokens 1,000↑ 500↓ cached 2,000 · cost $0.0030" in first_run
    assert "end: 1 turns, 0 tool calls, tokens 1,000↑ 500↓, cost $0.0030" in log


def test_the_fold_and_meter_give_turn_run_and_session_costs(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    _log, runtime = priced_run(tmp_path, session)
    state = ViewState()
    state.apply_all(read_session(session).events)
    meter = CostMeter(runtime.prices)
    costs = meter.costs(state)
    assert (costs.turn, costs.run, costs.session) == pytest.approx((SECOND, SECOND, FIRST + SECOND))
    summary = summarize(state, prices=runtime.prices)
    assert [s.cost for _i, s in summary.turns] == pytest.approx([FIRST, SECOND])
    assert summary.total.cost == pytest.approx(FIRST + SECOND)


def test_exports_carry_the_cost(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    _log, runtime = priced_run(tmp_path, session)
    recorded = read_session(session)
    md = export(recorded, "md", runtime.prices)
    assert "- Cost: $0.0060 (runs: $0.0030, $0.0030)" in md
    assert "tokens 1,000 in, 2,000 cached, 500 out; cost $0.0030" in md
    import json

    cost = json.loads(export(recorded, "json", runtime.prices))["cost"]
    assert cost["session"] == pytest.approx(0.006) and cost["runs"] == pytest.approx([0.003, 0.003])
    unknown = json.loads(export(recorded, "json", PriceTable()))["cost"]
    assert unknown["session"] is None
    assert "- Cost: unknown" in export(recorded, "md", PriceTable())

"""Pricing: docs/pricing.md's table over the bundled LiteLLM snapshot, suffixes, display names."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from codeburn.providers.pricing import prices as pricing
from codeburn.providers.pricing.prices import Rates, cost_of, rates_for

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

ROOT = Path(__file__).resolve().parents[2]
REFRESH = ROOT / "scripts" / "refresh-prices"

# docs/pricing.md's table, USD per million tokens: input, output, cache write, cache read
# (None = "—").
SONNET = (3, 15, 3.75, 0.30)
OPUS = (5, 25, 6.25, 0.50)
GPT5 = (1.25, 10, None, 0.125)
GROK46 = (2, 6, None, 0.50)
COMPOSER2 = (0.5, 2.5, 0.5, 0.20)
SPEC_TABLE: list[tuple[str, tuple[float, float, float | None, float | None]]] = [
    ("cursor-auto", SONNET),
    ("auto", SONNET),
    ("default", SONNET),
    ("", SONNET),
    ("claude-4.5-sonnet", SONNET),
    ("claude-4.5-sonnet-thinking", SONNET),
    ("claude-4.6-sonnet", SONNET),
    ("claude-4.6-sonnet-high", SONNET),
    ("claude-4.6-sonnet-low", SONNET),
    ("claude-4.6-sonnet-thinking", SONNET),
    ("claude-4.6-sonnet-high-thinking", SONNET),
    ("claude-4.5-opus-high-thinking", OPUS),
    ("claude-4.5-opus", OPUS),
    ("claude-4.5-opus-high", OPUS),
    ("claude-4.5-opus-thinking-high", OPUS),
    ("claude-opus-5-thinking-high", OPUS),
    ("composer-1", (1.25, 10, 1.25, 0.125)),
    ("composer-1.5", (3.5, 17.5, 3.5, 0.35)),
    ("composer-2", COMPOSER2),
    ("composer-2.5", COMPOSER2),
    ("composer-2.5-fast", (3, 15, 3, 0.50)),
    ("composer-2-fast", COMPOSER2),
    ("composer-1-fast", (1.25, 10, 1.25, 0.125)),
    ("claude-4-sonnet", SONNET),
    ("claude-4-sonnet-thinking", SONNET),
    ("claude-4-sonnet-1m", SONNET),
    ("gpt-5", GPT5),
    ("gpt-5-fast", GPT5),
    ("gpt-5.1-codex", GPT5),
    ("gpt-5.1-codex-high", GPT5),
    ("gpt-4.1", (2, 8, None, 0.50)),
    ("gemini-3-pro", (2, 12, None, 0.20)),
    ("cursor-small", (0, 0, 0, 0)),
    ("gpt-5.2", (1.75, 14, None, 0.175)),
    ("grok-code-fast-1", (0.20, 1.50, None, 0.02)),
    ("cursor-grok-4.6-high", GROK46),
    ("grok-4.6", GROK46),
    ("grok-4.6-high", GROK46),
    ("grok-bot-default", GROK46),
    ("grok-bot-code", GROK46),
]


def expected(row: tuple[float, float, float | None, float | None]) -> Rates:
    """Per-token rates from a per-million row, with docs/pricing.md's cache defaults."""
    inp, out, write, read = row
    return Rates(
        input=inp / 1e6,
        output=out / 1e6,
        cache_write=(1.25 * inp if write is None else write) / 1e6,
        cache_read=(0.1 * inp if read is None else read) / 1e6,
        cache_write_1h=2 * inp / 1e6,
    )


def assert_rates(actual: Rates | None, wanted: Rates) -> None:
    assert actual is not None
    for field in ("input", "output", "cache_write", "cache_read"):
        got, want = getattr(actual, field), getattr(wanted, field)
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), (field, got, want)


@pytest.mark.parametrize(("model", "row"), SPEC_TABLE, ids=[m or "<empty>" for m, _ in SPEC_TABLE])
def test_spec_table_names_resolve_to_their_rates(
    model: str, row: tuple[float, float, float | None, float | None]
) -> None:
    assert_rates(rates_for(model), expected(row))


@pytest.mark.parametrize(
    ("model", "input_tokens", "output_tokens", "usd"),
    [
        ("gpt-5", 0, 100, 0.001),
        ("cursor-auto", 0, 100, 0.0015),
        ("claude-4.6-sonnet", 50_000, 0, 0.15),
    ],
)
def test_spec_cost_examples(model: str, input_tokens: int, output_tokens: int, usd: float) -> None:
    cost, priced = cost_of(model, input_tokens, output_tokens)
    assert priced
    assert cost == pytest.approx(usd, rel=1e-12)


def test_cost_adds_all_four_token_kinds() -> None:
    # composer-1: 1.25 / 10 / 1.25 / 0.125 per million.
    cost, priced = cost_of("composer-1", 1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert priced
    assert cost == pytest.approx(1.25 + 10 + 1.25 + 0.125, rel=1e-12)


@pytest.mark.parametrize(
    ("model", "write", "read"),
    [
        ("gpt-5", 1.5625, 0.125),  # write missing: 1.25 × 1.25
        ("gpt-4.1", 2.5, 0.50),
        ("gemini-3-pro", 2.5, 0.20),
        ("gpt-5.2", 2.1875, 0.175),
        ("grok-code-fast-1", 0.25, 0.02),
        ("grok-bot-x", 2.5, 0.50),
    ],
)
def test_missing_cache_write_is_one_and_a_quarter_input(
    model: str, write: float, read: float
) -> None:
    cost_write, _ = cost_of(model, 0, 0, cache_write_tokens=1_000_000)
    cost_read, _ = cost_of(model, 0, 0, cache_read_tokens=1_000_000)
    assert cost_write == pytest.approx(write, rel=1e-12)
    assert cost_read == pytest.approx(read, rel=1e-12)


def test_missing_cache_read_is_a_tenth_of_input() -> None:
    catalogue = pricing.load_catalogue()
    raw = snapshot()["models"]
    no_read = [name for name, row in raw.items() if row[3] is None and row[0] is not None]
    if not no_read:
        pytest.skip("the snapshot has a cache-read rate for every model")
    for name in no_read[:20]:
        rates, inp = rates_for(name), raw[name][0]
        assert rates is not None
        assert inp is not None
        assert rates == catalogue[name]
        assert rates.cache_read == pytest.approx(0.1 * inp, rel=1e-12)


@pytest.mark.parametrize(
    ("variant", "base"),
    [
        ("claude-4.6-sonnet-medium", "claude-4.6-sonnet"),
        ("claude-4.6-sonnet-thinking-high", "claude-4.6-sonnet"),
        ("claude-4.5-sonnet-high-thinking-1m", "claude-4.5-sonnet"),
        ("claude-4-sonnet-1m-thinking", "claude-4-sonnet"),
        ("gpt-5-high-fast", "gpt-5"),
        ("gpt-5-low", "gpt-5"),
        ("gpt-5.2-medium", "gpt-5.2"),
        ("gpt-5.1-codex-high-fast", "gpt-5.1-codex"),
        ("composer-1.5-fast", "composer-1.5"),
        ("gemini-3-pro-high", "gemini-3-pro"),
        ("GPT-5-High", "gpt-5"),
    ],
)
def test_suffix_combinations_resolve_to_the_base(variant: str, base: str) -> None:
    assert rates_for(variant) is not None
    assert rates_for(variant) == rates_for(base)


@pytest.mark.parametrize(
    ("model", "row"),
    [
        ("claude-4.5-opus-max-preview-x", OPUS),
        ("gpt-5.1-codex-max-high", GPT5),
        ("grok-4.6-fast-reasoning", GROK46),
        ("cursor-grok-4.6-beta", GROK46),
    ],
)
def test_table_families_cover_unknown_tails(
    model: str, row: tuple[float, float, float | None, float | None]
) -> None:
    assert_rates(rates_for(model), expected(row))


def test_named_variant_is_not_its_base() -> None:
    assert rates_for("composer-2.5-fast") != rates_for("composer-2.5")


def snapshot() -> dict[str, dict[str, list[float | None]]]:
    data = resources.files("codeburn.providers.pricing.data").joinpath("model_prices.json")
    loaded: dict[str, dict[str, list[float | None]]] = json.loads(data.read_text("utf-8"))
    return loaded


def snapshot_rates(name: str) -> Rates:
    inp, out, write, read = snapshot()["models"][name]
    assert inp is not None
    assert out is not None
    return Rates(
        input=inp,
        output=out,
        cache_write=1.25 * inp if write is None else write,
        cache_read=0.1 * inp if read is None else read,
        cache_write_1h=2 * inp,
    )


@pytest.mark.parametrize("model", ["o3", "claude-haiku-4-5", "gpt-4.1-mini"])
def test_catalogue_only_models_are_priced_from_the_snapshot(model: str) -> None:
    table_names = {name for name, _ in SPEC_TABLE}
    assert model not in table_names
    assert_rates(rates_for(model), snapshot_rates(model))


def test_cursor_spelling_of_a_catalogue_only_model() -> None:
    assert_rates(rates_for("claude-4.5-haiku-thinking"), snapshot_rates("claude-haiku-4-5"))
    assert_rates(rates_for("o3-high"), snapshot_rates("o3"))


def test_distinct_catalogue_model_keeps_its_own_price() -> None:
    # gpt-5.1-codex-mini is its own model in the catalogue, not an effort variant of codex.
    assert_rates(rates_for("gpt-5.1-codex-mini"), snapshot_rates("gpt-5.1-codex-mini"))
    assert rates_for("gpt-5.1-codex-mini") != rates_for("gpt-5.1-codex")


def test_table_wins_over_the_catalogue() -> None:
    # The snapshot has its own grok-code-fast-1 rates; docs/pricing.md's must be used.
    raw = snapshot()["models"]["grok-code-fast-1"]
    assert raw[:2] != [0.20 / 1e6, 1.50 / 1e6]
    assert_rates(rates_for("grok-code-fast-1"), expected((0.20, 1.50, None, 0.02)))


@pytest.mark.parametrize("model", ["no-such-model", "llama-guard-9000", "claude-4.9-lyric"])
def test_unknown_models_are_unpriced(model: str) -> None:
    assert rates_for(model) is None
    assert cost_of(model, 1000, 1000, 1000, 1000) == (0.0, False)


def test_cursor_small_is_priced_at_zero() -> None:
    assert cost_of("cursor-small", 1000, 1000, 1000, 1000) == (0.0, True)


def test_resolution_is_memoised() -> None:
    first = rates_for("claude-4.6-sonnet-high-thinking")
    assert rates_for("claude-4.6-sonnet-high-thinking") is first


def test_snapshot_has_provenance_and_sane_rates() -> None:
    provenance = pricing.catalogue_provenance()
    assert provenance["source"] == "litellm"
    assert provenance["version"]
    assert len(str(provenance["generated"])) == len("2025-01-01")
    models = snapshot()["models"]
    assert len(models) > 50
    for name, row in models.items():
        assert len(row) == 4, name
        assert row[0] is not None
        assert row[1] is not None
        for value in row:
            assert value is None or (isinstance(value, int | float) and value >= 0), name


def test_import_does_not_load_the_snapshot() -> None:
    code = (
        "import codeburn.providers.pricing.prices as p\n"
        "assert p.load_catalogue.cache_info().currsize == 0\n"
        "p.rates_for('cursor-auto')\n"
        "assert p.load_catalogue.cache_info().currsize == 0, 'table names need no snapshot'\n"
        "p.rates_for('o3')\n"
        "assert p.load_catalogue.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def fake_wheel(path: Path, catalogue: dict[str, object]) -> Path:
    wheel = path / "litellm-9.8.7-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "litellm/model_prices_and_context_window_backup.json", json.dumps(catalogue)
        )
    return wheel


def test_refresh_script_builds_the_compact_file(tmp_path: Path) -> None:
    def entry(provider: str, costs: dict[str, float], mode: str = "chat") -> dict[str, object]:
        return {"litellm_provider": provider, "mode": mode, **costs}

    io = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
    cached = {**io, "cache_creation_input_token_cost": 1.25e-6, "cache_read_input_token_cost": 1e-7}
    dear = {"input_cost_per_token": 9.0, "output_cost_per_token": 9.0}
    catalogue: dict[str, object] = {
        "sample_spec": entry("one of https://docs.litellm.ai/docs/providers", io),
        "claude-x": entry("anthropic", cached),
        "xai/grok-y": entry("xai", io),
        "vertex_ai/xai/grok-y": entry("vertex_ai", dear),  # xai is preferred for grok-y
        "some-embedding": entry("openai", io, "embedding"),
        "ft:gpt-z": entry("openai", io),
        "fireworks_ai/other": entry("fireworks_ai", io),
        "gpt-codex-q": entry("openai", io, "responses"),
        "no-output": entry("openai", {"input_cost_per_token": 1e-6}),
    }
    out = tmp_path / "prices.json"
    wheel = fake_wheel(tmp_path, catalogue)
    subprocess.run(
        [sys.executable, str(REFRESH), "--wheel", str(wheel), "--output", str(out)],
        check=True,
        capture_output=True,
    )
    data = json.loads(out.read_text("utf-8"))
    assert data["provenance"]["source"] == "litellm"
    assert data["provenance"]["version"] == "9.8.7"
    assert data["models"] == {
        "claude-x": [1e-6, 2e-6, 1.25e-6, 1e-7],
        "grok-y": [1e-6, 2e-6, None, None],
        "gpt-codex-q": [1e-6, 2e-6, None, None],
    }


# docs/other-tools.md: the rates ccusage 20.0.24 applies to what Claude Code and Codex name
# (input / output / cache write 5 m / cache write 1 h / cache read, USD per million).
AGENT_RATES = [
    ("claude-sonnet-4-20250514", (3, 15, 3.75, 6, 0.30)),
    ("claude-sonnet-4-5-20250929", (3, 15, 3.75, 6, 0.30)),
    ("claude-opus-4-1-20250805", (15, 75, 18.75, 30, 1.50)),
    ("claude-opus-4-5-20251101", (5, 25, 6.25, 10, 0.50)),
    ("claude-opus-4-6", (5, 25, 6.25, 10, 0.50)),
    ("claude-haiku-4-5-20251001", (1, 5, 1.25, 2, 0.10)),
    ("gpt-5-codex", (1.25, 10, None, None, 0.125)),
    ("gpt-5.1-codex", (1.25, 10, None, None, 0.125)),
    ("gpt-5.2-codex", (1.75, 14, None, None, 0.175)),
    ("gpt-5.3-codex", (1.75, 14, None, None, 0.175)),
]


@pytest.mark.parametrize(("model", "row"), AGENT_RATES)
def test_other_tools_models_price_at_cc_usage_rates(
    model: str, row: tuple[float, float, float | None, float | None, float]
) -> None:
    rates = rates_for(model)
    assert rates is not None
    inp, out, write, write_1h, read = row
    assert rates.input == pytest.approx(inp / 1e6)
    assert rates.output == pytest.approx(out / 1e6)
    assert rates.cache_read == pytest.approx(read / 1e6)
    if write is not None and write_1h is not None:
        assert rates.cache_write == pytest.approx(write / 1e6)
        assert rates.cache_write_1h == pytest.approx(write_1h / 1e6)


def test_a_dated_claude_id_prices_as_its_undated_model() -> None:
    assert rates_for("claude-sonnet-4-20250514") == rates_for("claude-sonnet-4")
    assert rates_for("claude-nonesuch-4-20250514") is None

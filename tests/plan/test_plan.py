"""The deploy planner's arithmetic, checked against published worked figures (744B and 1.6T INT4 on H200)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from topoaudit.catalog import find_gpu
from topoaudit.errors import ConfigError
from topoaudit.model.codec import decode, encode
from topoaudit.model.plan import DeployPlan, KvShape, MachineDomains, PlanRequest
from topoaudit.model.values import Unsupported
from topoaudit.plan.precision import PRECISIONS, find_precision
from topoaudit.plan.sizing import parse_params, plan_deployment, standard_domains, tp_for

SPLIT_BOX = MachineDomains("example h200-nvl-split", ((0, 1, 2, 3), (4, 5, 6, 7)), "NVIDIA H200 NVL")


def _spec(name: str):  # type: ignore[no-untyped-def]
    spec = find_gpu(name)
    assert spec is not None, name
    return spec


# --- published worked figures -------------------------------------------------------------------------


def test_glm52_744b_int4_is_410gb_510gb_four_h200_one_node() -> None:
    plan = plan_deployment(PlanRequest(params_b=parse_params("744B"), precision="int4"), _spec("H200"))
    assert plan.weights_gb == pytest.approx(410, abs=1)  # "about 410GB"
    assert plan.footprint_gb == pytest.approx(510, abs=2)  # "close to 510GB"
    assert plan.cards == 4 and plan.tp_size == 4  # "clears at 3-4 cards of H200-class"
    assert plan.standard_node.fits_one_domain
    assert not plan.standard_node.at_edge
    assert plan.verdict == "fits-one-domain"
    assert plan.alternatives == ()


def test_glm52_on_b200_is_three_cards_by_memory() -> None:
    plan = plan_deployment(PlanRequest(params_b=744, precision="int4"), _spec("B200"))
    assert plan.cards_by_memory == 3  # "3-4 cards of H200-class or B200-class"
    assert plan.tp_size == 4  # TP rounds to a power of two
    assert plan.standard_node.fits_one_domain


def test_deepseek_v4_pro_1600b_int4_is_1_1tb_eight_h200_at_the_edge() -> None:
    plan = plan_deployment(
        PlanRequest(params_b=parse_params("1.6T"), active_params_b=parse_params("49B"), precision="int4"),
        _spec("H200"),
    )
    assert plan.weights_gb == pytest.approx(880)
    assert plan.footprint_gb == pytest.approx(1100)  # "around 1.1TB"
    assert plan.cards == 8 and plan.tp_size == 8
    assert plan.standard_node.fits_one_domain and plan.standard_node.at_edge
    assert plan.verdict == "at-edge-of-domain"
    assert plan.active_params_b == 49.0
    assert any("49B active" in s and "not memory" in s for s in plan.steps)


def test_deepseek_v4_pro_clears_the_node_once_batching_headroom_grows() -> None:
    # "... and clears it outright once you account for batching headroom"
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4", kv_headroom=0.5), _spec("H200"))
    assert plan.tp_size == 16
    assert not plan.standard_node.fits_one_domain
    assert plan.verdict == "crosses-domain"
    kinds = {a.kind for a in plan.alternatives}
    assert kinds == {"cards-that-fit-one-domain", "tp-in-domain-pp-across", "cross-node-tp"}
    # the first move: fewer, higher-capacity cards that bring the group back inside one domain
    bigger = [a for a in plan.alternatives if a.kind == "cards-that-fit-one-domain"]
    assert all(a.fits_one_domain and a.tp_size <= _spec(a.gpu_key).domain_size for a in bigger)
    pp = next(a for a in plan.alternatives if a.kind == "tp-in-domain-pp-across")
    assert (pp.tp_size, pp.pp_size) == (8, 2)
    slow = next(a for a in plan.alternatives if a.kind == "cross-node-tp")
    assert "slow" in slow.cost and not slow.fits_one_domain


def test_glm53_nvfp4_464gb_does_not_fit_one_gb300_needs_two() -> None:
    # The NVIDIA blog: 464 GB of NVFP4 weights > one GB300's 252 GB; TP=2 over two DGX Stations with an FP8
    # KV cache (each GPU holds 231 GB of weights and ~20 GB of cache, i.e. about 5% headroom).
    plan = plan_deployment(PlanRequest(weights_gb=464, kv_headroom=0.05), _spec("GB300"))
    assert plan.card_memory_gb == 252
    assert plan.cards_for_weights == 2
    assert plan.cards == 2 and plan.tp_size == 2
    assert any("do not fit one NVIDIA GB300" in s for s in plan.steps)
    # With the default 25% headroom it would take 3 cards (TP rounds to 4).
    default = plan_deployment(PlanRequest(weights_gb=464), _spec("GB300"))
    assert default.cards_for_weights == 2 and default.cards_by_memory == 3 and default.tp_size == 4


def test_glm53_753b_nvfp4_factor_matches_the_464gb_checkpoint() -> None:
    plan = plan_deployment(PlanRequest(params_b=parse_params("753B"), precision="nvfp4"), _spec("GB300"))
    assert plan.weights_gb == pytest.approx(464, rel=0.02)


def test_fp8_and_bf16_weights() -> None:
    # "744GB (FP8) or 1.49TB (BF16) for full model weights"
    assert plan_deployment(PlanRequest(params_b=744, precision="fp8"), _spec("H200")).weights_gb == 744
    assert plan_deployment(PlanRequest(params_b=744, precision="bf16"), _spec("H200")).weights_gb == pytest.approx(1488)


# --- the bundled two-domain H200 NVL box ------------------------------------------------------------


def test_split_box_four_card_plan_fits_a_domain() -> None:
    plan = plan_deployment(PlanRequest(params_b=744, precision="int4"), _spec("H200 NVL"), SPLIT_BOX)
    assert isinstance(plan.machine, type(plan.standard_node))
    assert plan.machine.fits_one_domain
    assert plan.machine.placement == (0, 1, 2, 3)
    assert plan.checked is plan.machine and plan.fits_one_domain


def test_split_box_eight_card_plan_crosses_domains() -> None:
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4"), _spec("H200 NVL"), SPLIT_BOX)
    assert plan.tp_size == 8
    assert not plan.fits_one_domain
    assert plan.machine.fits_machine  # type: ignore[union-attr]  # 8 GPUs are there, just not one domain
    assert isinstance(plan.machine.placement, Unsupported)  # type: ignore[union-attr]
    assert plan.verdict == "crosses-domain"
    pp = next(a for a in plan.alternatives if a.kind == "tp-in-domain-pp-across")
    assert (pp.tp_size, pp.pp_size, pp.cards) == (4, 2, 8)
    assert "2 of the 2 domains" in pp.summary
    # same 141 GB in an 8-GPU NVSwitch node is a way back into one domain
    assert any(a.gpu_key == "H200-SXM" for a in plan.alternatives)
    assert any("does not fit one NVLink domain of the audited machine" in s for s in plan.steps)


def test_h200_nvl_standard_node_is_two_domains_of_four() -> None:
    assert standard_domains(_spec("H200 NVL")) == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert standard_domains(_spec("L40S")) == tuple((i,) for i in range(8))
    assert len(standard_domains(_spec("GB300"))) == 1


def test_pcie_only_cards_never_hold_a_tp_group_in_a_domain() -> None:
    plan = plan_deployment(PlanRequest(params_b=70, precision="bf16"), _spec("L40S"))
    assert plan.tp_size == 4
    assert not plan.standard_node.fits_one_domain
    assert "PCIe only" in plan.standard_node.target


def test_small_model_fits_one_card() -> None:
    plan = plan_deployment(PlanRequest(params_b=parse_params("8B"), precision="bf16"), _spec("H100"))
    assert plan.cards == 1 and plan.tp_size == 1
    assert plan.standard_node.fits_one_domain
    assert any("no tensor parallelism needed" in s for s in plan.steps)


# --- TP rules, KV shape, margins --------------------------------------------------------------------


def test_tp_rounds_to_power_of_two_or_head_divisor() -> None:
    assert tp_for(3, None) == (4, "a power of two")
    assert tp_for(5, None)[0] == 8
    assert tp_for(5, 96)[0] == 6  # 96 heads: 6 divides it
    assert tp_for(7, 40)[0] == 8
    assert tp_for(3, 40, limit=4)[0] == 4
    assert tp_for(3, 96, limit=5)[0] == 4


def test_head_divisor_tp_from_the_request() -> None:
    plan = plan_deployment(PlanRequest(params_b=744, precision="bf16", attention_heads=40), _spec("H200"))
    # 744 x 2 x 1.25 = 1860 GB / 139 GB usable -> 14 cards; the smallest divisor of 40 heads >= 14 is 20
    assert plan.cards_by_memory == 14
    assert plan.tp_size == 20
    assert plan.tp_rule == "a divisor of 40 attention heads"


def test_more_cards_than_heads_spill_into_pipeline_stages() -> None:
    plan = plan_deployment(PlanRequest(params_b=744, precision="bf16", attention_heads=8), _spec("H200"))
    assert plan.tp_size == 8 and plan.pp_size == 2 and plan.cards == 16


def test_kv_cache_from_model_shape() -> None:
    # Llama-3-70B-like: 80 layers, 8 KV heads x 128, 128k tokens, batch 4, fp8 cache
    shape = KvShape(context_tokens=131072, layers=80, kv_heads=8, head_dim=128, batch=4, kv_precision="fp8")
    plan = plan_deployment(PlanRequest(params_b=70, precision="bf16", kv_shape=shape), _spec("H200"))
    expected_kv = 2 * 80 * 8 * 128 * 131072 * 4 * 1 / 1e9
    assert plan.kv_cache_gb == pytest.approx(expected_kv, rel=1e-3)
    assert plan.kv_method == "computed"
    assert isinstance(plan.kv_headroom_fraction, Unsupported)
    assert plan.safety_margin_fraction == 0.10  # default when only the cache is counted
    assert plan.footprint_gb == pytest.approx((140 + expected_kv) * 1.1, rel=1e-3)


def test_safety_margin_and_reserve_are_configurable() -> None:
    plan = plan_deployment(PlanRequest(params_b=744, precision="int4", safety_margin=0.2, reserve_gb=10), _spec("H200"))
    assert plan.footprint_gb == pytest.approx(409.2 * 1.25 * 1.2)
    assert plan.usable_per_card_gb == 131
    assert plan.cards_by_memory == 5 and plan.tp_size == 8


# --- precision table and parsing --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bpp"),
    [
        ("fp32", 4.0),
        ("BF16", 2.0),
        ("fp16", 2.0),
        ("fp8", 1.0),
        ("int8", 1.0),
        ("INT4", 0.55),
        ("mxfp4", 0.55),
        ("Q8_0", 1.0625),
        ("q6_k", 0.82),
        ("Q5_K_M", 0.71),
        ("Q4_K_M", 0.605),
        ("q3_k_m", 0.489),
        ("Q2_K", 0.419),
    ],
)
def test_precision_factors(name: str, bpp: float) -> None:
    assert find_precision(name).bytes_per_param == pytest.approx(bpp, abs=0.002)


def test_every_precision_documents_its_factor() -> None:
    for p in PRECISIONS:
        assert p.basis and p.kind in ("exact", "typical")
        assert 0.2 < p.bytes_per_param <= 4


@pytest.mark.parametrize(
    ("text", "billions"),
    [("744B", 744), ("1.6T", 1600), ("49B", 49), ("70b", 70), ("350M", 0.35), ("7000000000", 7), (" 8 B ", 8)],
)
def test_parse_params(text: str, billions: float) -> None:
    assert parse_params(text) == pytest.approx(billions)


@pytest.mark.parametrize("text", ["banana", "744", "", "-5B", "1.6X", "0B"])
def test_parse_params_refuses_with_a_sentence(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_params(text)
    assert str(err.value)


@pytest.mark.parametrize(
    "request_",
    [
        PlanRequest(params_b=744, precision="int4", kv_headroom=-0.1),
        PlanRequest(params_b=744, precision="int4", safety_margin=-1),
        PlanRequest(params_b=744, precision="int4", reserve_gb=500),
        PlanRequest(params_b=744, precision="int99"),
        PlanRequest(params_b=744),
        PlanRequest(weights_gb=-3),
        PlanRequest(params_b=744, precision="int4", weights_gb=400),
        PlanRequest(params_b=40, active_params_b=49, precision="int4"),
        PlanRequest(params_b=744, precision="int4", attention_heads=0),
    ],
)
def test_impossible_requests_raise_config_error(request_: PlanRequest) -> None:
    with pytest.raises(ConfigError):
        plan_deployment(request_, _spec("H200"))


# --- the result is a JSON-friendly frozen dataclass -------------------------------------------------


def test_plan_is_frozen_and_round_trips_through_the_report_codec() -> None:
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4"), _spec("H200 NVL"), SPLIT_BOX)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tp_size = 2  # type: ignore[misc]
    data = json.loads(json.dumps(encode(plan)))
    assert data["footprint_gb"] == 1100
    assert data["params_b"] == 1600
    assert data["active_params_b"]["status"] == "unsupported"
    assert decode(DeployPlan, data) == plan


def test_workstation_cards_without_nvlink_point_to_cards_that_fit_one_domain() -> None:
    # "plain PCIe with no NVLink at all, which describes most workstation cards including the RTX PRO 6000"
    plan = plan_deployment(
        PlanRequest(params_b=744, precision="int4"), _spec("NVIDIA RTX PRO 6000 Blackwell Server Edition")
    )
    assert plan.gpu_key == "RTX-PRO-6000" and plan.card_memory_gb == 96
    assert plan.tp_size == 8 and not plan.fits_one_domain
    bigger = [a for a in plan.alternatives if a.kind == "cards-that-fit-one-domain"]
    assert [a.cards for a in bigger] == sorted(a.cards for a in bigger)  # fewest cards first
    assert bigger[0].gpu_key == "B300" and bigger[0].cards == 2  # 288 GB cards: 512 GB in two
    assert {"H200-SXM", "H200-NVL", "B200"} <= {a.gpu_key for a in bigger if a.cards == 4}
    assert all(a.fits_one_domain for a in bigger)


def test_catalog_additions_for_the_planner() -> None:
    assert _spec("NVIDIA H20").memory_bytes == 96 * 10**9 and _spec("NVIDIA H200").key == "H200-SXM"
    assert _spec("NVIDIA A10G").key == "A10" and _spec("NVIDIA A100-SXM4-80GB").key == "A100-SXM"
    assert _spec("NVIDIA RTX 6000 Ada Generation").domain_size == 1


# --- wording, order of the alternatives, the binding limit ----------------------------------------------


def test_plan_text_speaks_of_formulas_and_sources_not_of_how_it_was_made() -> None:
    texts = [p.basis for p in PRECISIONS]
    for precision in ("int4", "fp8", "bf16", "nvfp4", "q4_k_m"):
        plan = plan_deployment(PlanRequest(params_b=1600, precision=precision), _spec("H200"), SPLIT_BOX)
        texts += [*plan.steps, *(a.summary for a in plan.alternatives), *(a.cost for a in plan.alternatives)]
    assert not [t for t in texts if "seed" in t.lower()]
    int4 = find_precision("int4").basis
    assert "0.55 B per parameter" in int4 and "group scales" in int4


def test_split_box_alternatives_start_with_what_the_box_can_do_then_what_to_rent() -> None:
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4"), _spec("H200 NVL"), SPLIT_BOX)
    kinds = [a.kind for a in plan.alternatives]
    assert kinds[0] == "tp-in-domain-pp-across" and (plan.alternatives[0].tp_size, plan.alternatives[0].pp_size) == (
        4,
        2,
    )
    assert kinds[1] == "cross-node-tp" and "across the domains of the audited machine" in plan.alternatives[1].summary
    assert set(kinds[2:]) == {"cards-that-fit-one-domain"}
    assert all(a.summary.startswith("rent or buy") for a in plan.alternatives[2:])
    assert any("memory binds: the footprint needs 8 cards" in s for s in plan.steps)


def test_a_group_larger_than_the_node_is_spread_over_machines_last() -> None:
    plan = plan_deployment(PlanRequest(params_b=1600, precision="int4", kv_headroom=0.5), _spec("H200"))
    kinds = [a.kind for a in plan.alternatives]
    # 16 cards: no box at hand holds them, so other cards come first and several machines last
    assert kinds[0] == "cards-that-fit-one-domain" and kinds[-2:] == ["tp-in-domain-pp-across", "cross-node-tp"]
    assert "stages span machines" in plan.alternatives[-2].summary


def test_the_domain_binds_when_memory_would_fit_it() -> None:
    # 5 cards by memory on a box of two 6-GPU domains: memory alone fits a domain, TP rounds up to 8
    box = MachineDomains("six-six", (tuple(range(6)), tuple(range(6, 12))), None)
    plan = plan_deployment(PlanRequest(weights_gb=600, kv_headroom=0.0), _spec("H200"), box)
    assert plan.cards_by_memory == 5 and plan.tp_size == 8 and not plan.fits_one_domain
    assert any(s.startswith("the domain binds: 5 card(s) would hold the model") for s in plan.steps)

"""Gateway, lazy and auto modes, and the meta-tools' shapes."""

from __future__ import annotations

import json

import pytest

from toolmgmt_core import (
    Auto,
    Discovery,
    Lazy,
    Search,
    Tool,
    ToolCatalog,
    ToolManager,
    count_tokens,
)
from toolmgmt_core._session.meta_tools import META_TOOL_NAMES
from toolmgmt_core._session.modes import MODES


def orders_handler(customer: dict, items: list, note: str = "") -> dict:
    return {"customer": customer, "items": items, "note": note}


def make_catalog(extra_per_domain: int = 0) -> ToolCatalog:
    catalog = ToolCatalog()
    catalog.add(
        Tool(
            name="create_order",
            description="Create a sales order for a customer. Use for new purchases only.",
            parameters={
                "type": "object",
                "properties": {
                    "customer": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "vip": {"type": "boolean"}},
                        "required": ["id"],
                    },
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                            "required": ["sku", "qty"],
                        },
                    },
                    "note": {"type": "string"},
                },
                "required": ["customer", "items"],
            },
            domain="sales",
            group="orders",
            usage_notes="Quantities are units, not packs.",
            input_examples=({"customer": {"id": "c1"}, "items": [{"sku": "A", "qty": 2}]},),
            output_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
            handler=orders_handler,
        )
    )
    catalog.add(
        Tool(
            name="refund_order",
            description="Refund a sales order.",
            parameters={
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
            domain="sales",
            group="refunds",
            handler=lambda order_id: {"refunded": order_id},
        )
    )
    catalog.add(
        Tool(
            name="get_stock_level",
            description="Get the stock level of a product.",
            parameters={"type": "object", "properties": {"sku": {"type": "string"}}},
            domain="inventory",
            group="stock",
            handler=lambda sku="": {"sku": sku, "level": 4},
        )
    )
    for i in range(extra_per_domain):
        for domain in ("sales", "inventory"):
            catalog.add(
                Tool(
                    name=f"{domain}_report_{i}",
                    description=f"Report number {i} about {domain} figures and trends.",
                    parameters={
                        "type": "object",
                        "properties": {f"field_{k}": {"type": "string"} for k in range(6)},
                    },
                    domain=domain,
                    group="reports",
                )
            )
    return catalog


@pytest.fixture
def catalog() -> ToolCatalog:
    return make_catalog()


# -- gateway ------------------------------------------------------------------------------


def test_gateway_lists_exactly_the_three_meta_tools(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    tools = session.tools()
    assert [t.name for t in tools] == ["discover_tools", "get_tool_schema", "execute_tool"]
    assert all(t.metadata["meta"] for t in tools)
    assert set(tools[0].parameters["properties"]) == {"domain", "group", "query"}
    assert set(tools[1].parameters["properties"]) == {"tool_name", "tool_names"}
    assert set(tools[2].parameters["properties"]) == {"tool_name", "arguments"}


def test_gateway_meta_tools_teach_the_workflow_and_carry_hints(catalog) -> None:
    discover, schema, execute = ToolManager(catalog, mode="gateway").session().tools()
    assert "get_tool_schema" in discover.description and "execute_tool" in discover.description
    assert "execute_tool" in schema.description and "discover_tools" in execute.description
    assert discover.annotations.read_only and not discover.annotations.open_world
    assert schema.annotations.read_only
    assert execute.annotations.read_only is False and execute.annotations.open_world is True
    assert discover.to_dict()["annotations"]["readOnlyHint"] is True


def test_instructions_are_short(catalog) -> None:
    for mode in ("search", "gateway", "lazy"):
        text = ToolManager(catalog, mode=mode).instructions
        assert text == MODES[mode]().instructions
        assert 30 <= count_tokens(text) <= 100, (mode, count_tokens(text))
    assert "discover_tools" in ToolManager(catalog, mode="gateway").session().instructions


def test_discover_without_arguments_gives_the_table_of_contents(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    result = session.call_sync("discover_tools", {})
    assert result.value == {
        "domains": {
            "inventory": {"tools": 1, "groups": ["stock"]},
            "sales": {"tools": 2, "groups": ["orders", "refunds"]},
        }
    }
    assert result.content == json.dumps(result.value, separators=(",", ":"))  # compact JSON


def test_discover_domain_then_group(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    domain = session.call_sync("discover_tools", {"domain": "sales"}).value
    assert domain == {
        "domain": "sales",
        "groups": {
            "orders": {"create_order": "Create a sales order for a customer."},
            "refunds": {"refund_order": "Refund a sales order."},
        },
    }
    group = session.call_sync("discover_tools", {"domain": "Sales", "group": "refunds"}).value
    assert group == {
        "domain": "sales",
        "group": "refunds",
        "tools": {"refund_order": "Refund a sales order."},
    }


def test_discover_unknown_domain_or_group_lists_valid_ones(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    bad = session.call_sync("discover_tools", {"domain": "hr"})
    assert bad.is_error and "Valid domains: inventory, sales" in bad.error.message
    bad_group = session.call_sync("discover_tools", {"domain": "sales", "group": "stock"})
    assert "Valid groups: orders, refunds" in bad_group.error.message


def test_discover_query_searches_everything(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    result = session.call_sync("discover_tools", {"query": "stock level of a product"})
    assert next(iter(result.value["tools"])) == "get_stock_level"
    scoped = session.call_sync("discover_tools", {"domain": "sales", "query": "stock level"})
    assert "get_stock_level" not in scoped.value["tools"]


def test_discover_large_domain_asks_to_narrow() -> None:
    catalog = make_catalog(extra_per_domain=30)
    session = ToolManager(catalog, mode="gateway", discovery=Discovery(browse_limit=20)).session()
    result = session.call_sync("discover_tools", {"domain": "sales"}).value
    assert result["groups"] == {"orders": 1, "refunds": 1, "reports": 30}
    assert "pass a group" in result["note"]
    group = session.call_sync("discover_tools", {"domain": "sales", "group": "reports"}).value
    assert len(group["tools"]) == 20 and "First 20 of 30" in group["note"]


def test_schema_carries_notes_examples_and_output_schema(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    schema = session.call_sync("get_tool_schema", {"tool_name": "create_order"}).value
    assert schema["name"] == "create_order"
    assert schema["parameters"]["required"] == ["customer", "items"]
    assert schema["usage_notes"] == "Quantities are units, not packs."
    assert schema["input_examples"][0]["items"][0]["qty"] == 2
    assert schema["output_schema"]["properties"]["order_id"]["type"] == "string"
    several = session.call_sync(
        "get_tool_schema", {"tool_names": ["refund_order", "get_stok_level"]}
    ).value
    assert [t["name"] for t in several["tools"]] == ["refund_order"]
    assert "Closest: get_stock_level" in several["errors"]["get_stok_level"]
    assert session.loaded() == ["create_order", "refund_order"]
    assert len(session.tools()) == 3, "schemas never grow the gateway list"


def test_schema_and_execute_forgive_common_key_slips(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    several = session.call_sync("get_tool_schema", {"tool_name": ["refund_order", "create_order"]})
    assert [t["name"] for t in several.value["tools"]] == ["refund_order", "create_order"]
    by_name = session.call_sync("get_tool_schema", {"name": "refund_order"})
    assert by_name.value["name"] == "refund_order"
    ran = session.call_sync(
        "execute_tool", {"name": "refund_order", "arguments": {"order_id": "o"}}
    )
    assert ran.value == {"refunded": "o"}


def test_schema_errors(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    none = session.call_sync("get_tool_schema", {})
    assert none.error.code == "invalid_arguments" and "tool_name" in none.error.message
    unknown = session.call_sync("get_tool_schema", {"tool_name": "make_order"})
    assert unknown.error.code == "unknown_tool"


def test_execute_validates_and_runs(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    args = {"customer": {"id": "c9"}, "items": [{"sku": "B", "qty": 1}]}
    result = session.call_sync("execute_tool", {"tool_name": "create_order", "arguments": args})
    assert result.value == {**args, "note": ""}
    assert result.tool_name == "create_order"
    wrong = session.call_sync(
        "execute_tool",
        {"tool_name": "create_order", "arguments": {"customer": {"id": 5}, "items": []}},
    )
    assert wrong.error.code == "invalid_arguments"
    assert "customer.id: expected string, got integer 5" in wrong.error.message
    assert "get_tool_schema(tool_name='create_order')" in wrong.error.message


def test_execute_repairs_stringified_arguments(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    args = json.dumps({"customer": json.dumps({"id": "c1"}), "items": '[{"sku":"A","qty":3}]'})
    result = session.call_sync("execute_tool", {"tool_name": "create_order", "arguments": args})
    assert not result.is_error, result.content
    assert result.value["customer"] == {"id": "c1"}
    assert result.value["items"] == [{"sku": "A", "qty": 3}]


def test_execute_accepts_arguments_beside_the_tool_name(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    result = session.call_sync("execute_tool", {"tool_name": "refund_order", "order_id": "o1"})
    assert result.value == {"refunded": "o1"}


def test_execute_unknown_tool_and_missing_name(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    unknown = session.call_sync("execute_tool", {"tool_name": "refund", "arguments": {}})
    assert unknown.error.code == "unknown_tool" and "refund_order" in unknown.error.suggestions
    assert "discover_tools" in unknown.error.message
    missing = session.call_sync("execute_tool", {"arguments": {}})
    assert "tool_name: required field is missing" in missing.error.message


def test_gateway_direct_call_follows_call_unloaded(catalog) -> None:
    strict = ToolManager(catalog, mode="gateway").session()
    refused = strict.call_sync("refund_order", {"order_id": "o1"})
    assert refused.error.code == "tool_not_loaded" and "execute_tool" in refused.error.message
    lenient = ToolManager(
        catalog, mode="gateway", discovery=Discovery(call_unloaded="load")
    ).session()
    assert lenient.call_sync("refund_order", {"order_id": "o1"}).value == {"refunded": "o1"}
    assert len(lenient.tools()) == 3


def test_gateway_does_not_expose_other_modes_meta_tools(catalog) -> None:
    session = ToolManager(catalog, mode="gateway").session()
    assert session.call_sync("tool_search", {"query": "x"}).error.code == "unknown_tool"


# -- lazy ------------------------------------------------------------------------------------


def test_lazy_lists_every_tool_with_an_empty_schema(catalog) -> None:
    session = ToolManager(catalog, mode="lazy").session()
    tools = session.tools()
    assert [t.name for t in tools] == [
        "load_tool_schema",
        "create_order",
        "refund_order",
        "get_stock_level",
    ]
    for stub in tools[1:]:
        assert stub.parameters == {"type": "object", "properties": {}}
        assert stub.metadata == {"lazy_stub": True}
    assert tools[1].description == "Create a sales order for a customer."
    full = ToolManager(catalog, mode=Lazy(descriptions="full")).session()
    assert full.tools()[1].description == catalog.get("create_order").description
    assert not session.is_deferred("create_order")


def test_lazy_load_tool_schema(catalog) -> None:
    session = ToolManager(catalog, mode="lazy").session()
    before = [t.to_dict(full=False) for t in session.tools()]
    result = session.call_sync("load_tool_schema", {"tool_names": ["create_order"]})
    assert result.value["tools"][0]["parameters"]["required"] == ["customer", "items"]
    assert result.value["tools"][0]["usage_notes"]
    assert session.loaded() == ["create_order"]
    assert [t.to_dict(full=False) for t in session.tools()] == before, "the list stays stable"
    single = session.call_sync("load_tool_schema", {"tool_names": "refund_order"})
    assert [t["name"] for t in single.value["tools"]] == ["refund_order"]


def test_lazy_empty_list_is_an_explicit_error(catalog) -> None:
    session = ToolManager(catalog, mode="lazy").session()
    for args in ({"tool_names": []}, {}):
        result = session.call_sync("load_tool_schema", args)
        assert result.is_error and result.error.code == "invalid_arguments"
        assert "tool_names" in result.error.message


def test_lazy_calls_are_validated_against_the_real_schema(catalog) -> None:
    session = ToolManager(catalog, mode="lazy").session()
    bad = session.call_sync("create_order", {"customer": "c1"})
    assert bad.error.code == "invalid_arguments"
    assert "items: required field is missing" in bad.error.message
    assert "load_tool_schema(tool_names=['create_order'])" in bad.error.message
    pinned = ToolManager(catalog, mode="lazy", always_on=["create_order"]).session()
    listed_in_full = pinned.call_sync("create_order", {"customer": "c1"})
    assert "load_tool_schema" not in listed_in_full.error.message
    stringified = session.call_sync(
        "create_order", {"customer": '{"id": "c1"}', "items": '[{"sku": "A", "qty": 1}]'}
    )
    assert stringified.value["customer"] == {"id": "c1"}


def test_lazy_defer_loading_true_is_appended_after_load(catalog) -> None:
    catalog.replace(catalog.get("refund_order").replace(defer_loading=True))
    session = ToolManager(catalog, mode="lazy").session()
    assert "refund_order" not in [t.name for t in session.tools()]
    refused = session.call_sync("refund_order", {"order_id": "o"})
    assert "load_tool_schema(tool_names=['refund_order'])" in refused.error.message
    session.call_sync("load_tool_schema", {"tool_names": ["refund_order"]})
    assert session.tools()[-1].name == "refund_order"
    assert session.tools()[-1].parameters["required"] == ["order_id"]
    assert session.call_sync("refund_order", {"order_id": "o"}).value == {"refunded": "o"}


# -- auto ------------------------------------------------------------------------------------


def test_auto_lists_flat_under_the_threshold(catalog) -> None:
    session = ToolManager(catalog, mode="auto").session()
    assert session.mode == "flat"
    assert [t.name for t in session.tools()] == [t.name for t in catalog]
    assert session.usage().definition_tokens == session.usage().flat_tokens
    assert session.instructions == ""


def test_auto_unknown_names_point_at_what_is_listed(catalog) -> None:
    flat = ToolManager(catalog, mode="auto").session()
    for name in ("no_such_tool", "tool_search"):  # flat lists no tool_search to point at
        message = flat.call_sync(name, {}).error.message
        assert message.endswith("Pick a name from your tool list."), message
    flat_tokens = catalog.definition_tokens()
    deferred = ToolManager(catalog, mode=Auto(threshold_tokens=flat_tokens - 1)).session()
    message = deferred.call_sync("no_such_tool", {}).error.message
    assert message.endswith("Use tool_search to find tools."), message


def test_auto_defers_over_a_token_threshold(catalog) -> None:
    flat = catalog.definition_tokens()
    session = ToolManager(catalog, mode=Auto(threshold_tokens=flat - 1)).session()
    assert session.mode == "search"
    assert [t.name for t in session.tools()] == ["tool_search", "call_tool"]
    under = ToolManager(catalog, mode=Auto(threshold_tokens=flat)).session()
    assert under.mode == "flat"


def test_auto_defers_over_a_share_of_the_context_window(catalog) -> None:
    flat = catalog.definition_tokens()
    small = ToolManager(catalog, mode=Auto(context_window=flat * 5)).session()
    assert small.mode == "search", "10% of a window 5x the catalog is less than the catalog"
    large = ToolManager(catalog, mode=Auto(context_window=flat * 20)).session()
    assert large.mode == "flat"
    share = ToolManager(catalog, mode=Auto(context_window=flat * 5, threshold_share=0.5))
    assert share.session().mode == "flat"
    both = ToolManager(catalog, mode=Auto(context_window=flat * 20, threshold_tokens=flat // 2))
    assert both.mode.threshold == flat // 2 and both.session().mode == "search"


def test_auto_honours_defer_loading(catalog) -> None:
    catalog.replace(catalog.get("get_stock_level").replace(defer_loading=False))
    catalog.replace(catalog.get("refund_order").replace(defer_loading=True))
    flat = ToolManager(catalog, mode="auto").session()
    listed = ["tool_search", "call_tool", "get_stock_level", "create_order"]
    assert [t.name for t in flat.tools()] == listed
    assert flat.is_deferred("refund_order")
    found = flat.call_sync("tool_search", {"query": "refund sales order"})
    assert list(found.value["found"])[0] == "refund_order"
    assert [t.name for t in flat.tools()] == listed, "the list stays as it is"
    assert not flat.call_sync("refund_order", {"order_id": "o1"}).error  # found: callable
    growing = ToolManager(catalog, mode=Auto(search=Search(appends=True))).session()
    found = growing.call_sync("tool_search", {"query": "refund sales order"})
    assert found.value["added"] == ["refund_order"]
    assert growing.tools()[-1].name == "refund_order"
    deferred = ToolManager(catalog, mode=Auto(threshold_tokens=1)).session()
    names = [t.name for t in deferred.tools()]
    assert names == ["tool_search", "call_tool", "get_stock_level"]


def test_catalog_tool_named_like_a_meta_tool_is_shadowed(catalog) -> None:
    catalog.add(Tool(name="execute_tool", description="Impostor.", handler=lambda: "no"))
    session = ToolManager(catalog, mode="gateway").session()
    names = [t.name for t in session.tools()]
    assert names.count("execute_tool") == 1 and session.tools()[2].metadata["meta"]
    assert "execute_tool" not in [t.name for t in session.visible_tools()]
    assert set(META_TOOL_NAMES) >= {t.name for t in session.tools()}


def test_no_mode_name_is_compared_as_a_string_outside_the_mode_classes() -> None:
    """Code asks the mode object (its meta-tools, plan, hints), never which mode it has."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = {"search", "gateway", "lazy", "flat"}  # "auto" is also a tool-choice mode
    found = []
    for folder in (root / "toolmgmt_core", root / "adapters"):
        for path in folder.rglob("*.py"):
            if "modes" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Compare):
                    continue
                parts = [node.left, *node.comparators]
                constants = [
                    c.value
                    for part in parts
                    for c in ([part] if not isinstance(part, ast.Tuple | ast.List) else part.elts)
                    if isinstance(c, ast.Constant)
                ]
                if names & set(constants):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found

"""Shopping and payments: a shop's products, the cart, checkout, orders (cancel, refund) and the wallet's
payment methods. Money is in yuan, rounded to the fen.

An order goes ``paid`` → ``shipped`` → ``delivered`` (the shop moves it; a task's ``S_0`` says where
it is); the user can cancel a ``paid`` order (its stock and a wallet's money come back) and ask a
refund of a ``delivered`` one (``refund_requested``).

State dependencies: checkout, cancelling and refunds need the network (:func:`~.system_settings.online`);
checkout pays with the given method or the default one (none: ``missing_parameter``, ask the user), a
wallet method only up to its balance, and only what the shop has in stock; paying needs
``payments: pay``.
"""

from __future__ import annotations

import json
from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, integer, text
from ..state import PhoneState
from .system_settings import offline_failure, online

ORDER_STATUSES = ("paid", "shipped", "delivered", "cancelled", "refund_requested")
#: At most this many of one product in the cart.
MAX_QUANTITY = 99


def _money(value: float) -> float:
    return round(value + 1e-9, 2)


def _product(state: PhoneState, product_id: str) -> dict[str, Any] | None:
    return state.one("SELECT product_id, name, price, stock FROM products WHERE product_id = ?", (product_id,))


@tool("search_products", "shopping_payments", "Search the shop's products by name or category (price and stock).",
      text("query", "a product name or a category such as 日用品"))
def search_products(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pattern = f"%{args['query'].strip()}%"
    return success(products=state.query("SELECT product_id, name, category, price, stock FROM products WHERE name "
                                        "LIKE ? OR category LIKE ? ORDER BY product_id LIMIT 20", (pattern, pattern)))


@tool("add_to_cart", "shopping_payments", "Put a product in the cart (more of it if it is there already).",
      text("product_id", "the product (search_products)"),
      integer("quantity", "how many to add", 1, MAX_QUANTITY, required=False), writes=("cart_items",))
def add_to_cart(state: PhoneState, args: dict[str, Any]) -> Feedback:
    product = _product(state, args["product_id"])
    if product is None:
        return failure(ErrorKind.NOT_FOUND, f"no product {args['product_id']!r}; search_products finds them")
    held = state.one("SELECT quantity FROM cart_items WHERE product_id = ?", (args["product_id"],))
    quantity = (held["quantity"] if held else 0) + (args.get("quantity") or 1)
    if quantity > min(product["stock"], MAX_QUANTITY):
        return failure(ErrorKind.STATE_CONFLICT, f"{product['name']}: {quantity} wanted, {product['stock']} in stock"
                       + (f" (at most {MAX_QUANTITY})" if quantity > MAX_QUANTITY else ""), stock=product["stock"])
    state.execute("INSERT INTO cart_items (product_id, quantity) VALUES (?, ?) ON CONFLICT(product_id) DO UPDATE SET "
                  "quantity = excluded.quantity", (args["product_id"], quantity))
    return success(product_id=args["product_id"], quantity=quantity)


@tool("remove_from_cart", "shopping_payments", "Take a product out of the cart.",
      text("product_id", "the product (view_cart)"), writes=("cart_items",))
def remove_from_cart(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM cart_items WHERE product_id = ?", (args["product_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"{args['product_id']!r} is not in the cart; view_cart shows it")
    return success(product_id=args["product_id"], removed=True)


def _cart(state: PhoneState) -> list[dict[str, Any]]:
    return state.query("SELECT c.product_id, p.name, c.quantity, p.price, p.stock FROM cart_items c JOIN products p "
                       "ON p.product_id = c.product_id ORDER BY c.product_id")


@tool("view_cart", "shopping_payments", "The cart: each product, its quantity and price, and the total.")
def view_cart(state: PhoneState, args: dict[str, Any]) -> Feedback:
    items = _cart(state)
    return success(items=[{k: v for k, v in item.items() if k != "stock"} for item in items],
                   total=_money(sum(i["price"] * i["quantity"] for i in items)))


@tool("list_payment_methods", "shopping_payments", "The wallet's payment methods (cards, balances) and the default.")
def list_payment_methods(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(methods=state.query("SELECT method_id, kind, label, balance, is_default FROM payment_methods ORDER "
                                       "BY is_default DESC, method_id"))


@tool("set_default_payment_method", "shopping_payments", "Make a payment method the default one.",
      text("method_id", "the payment method (list_payment_methods)"), writes=("payment_methods",))
def set_default_payment_method(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT is_default FROM payment_methods WHERE method_id = ?", (args["method_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no payment method {args['method_id']!r}; list_payment_methods shows "
                       "them")
    if row["is_default"]:
        return failure(ErrorKind.STATE_CONFLICT, f"{args['method_id']} is already the default")
    state.execute("UPDATE payment_methods SET is_default = 0 WHERE is_default = 1")
    state.execute("UPDATE payment_methods SET is_default = 1 WHERE method_id = ?", (args["method_id"],))
    return success(method_id=args["method_id"], is_default=True)


def _payment_method(state: PhoneState, method_id: str | None) -> dict[str, Any] | Feedback:
    if method_id is None:
        row = state.one("SELECT method_id, kind, label, balance FROM payment_methods WHERE is_default = 1")
        if row is None:
            return failure(ErrorKind.MISSING_PARAMETER, "no default payment method: ask the user which to pay with "
                           "(list_payment_methods)", fields=["method_id"])
        return row
    row = state.one("SELECT method_id, kind, label, balance FROM payment_methods WHERE method_id = ?", (method_id,))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no payment method {method_id!r}; list_payment_methods shows them")
    return row


@tool("checkout_cart", "shopping_payments", "Order and pay for everything in the cart (needs the network; pays "
      "with the default payment method unless one is given).",
      text("method_id", "the payment method (list_payment_methods)", required=False),
      permission=("payments", "pay"), writes=("orders", "cart_items", "products", "payment_methods", "counters"))
def checkout_cart(state: PhoneState, args: dict[str, Any]) -> Feedback:
    items = _cart(state)
    if not items:
        return failure(ErrorKind.STATE_CONFLICT, "the cart is empty: add_to_cart first")
    short = next((i for i in items if i["quantity"] > i["stock"]), None)
    if short is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{short['name']}: {short['quantity']} in the cart, {short['stock']} "
                       "in stock", product_id=short["product_id"], stock=short["stock"])
    method = _payment_method(state, args.get("method_id"))
    if isinstance(method, Feedback):
        return method
    total = _money(sum(i["price"] * i["quantity"] for i in items))
    if method["balance"] is not None and method["balance"] < total:
        return failure(ErrorKind.STATE_CONFLICT, f"{method['label']} holds {method['balance']:.2f}, the order costs "
                       f"{total:.2f}: pay with another method", balance=method["balance"], total=total)
    if not online(state):
        return offline_failure("paying")
    order_id = state.next_id("order")
    lines = [{"product_id": i["product_id"], "quantity": i["quantity"], "price": i["price"]} for i in items]
    state.execute("INSERT INTO orders (order_id, items, total, method_id, status, placed_at) VALUES (?, ?, ?, ?, "
                  "'paid', ?)", (order_id, json.dumps(lines, sort_keys=True), total, method["method_id"],
                                 state.setting("clock", "")))
    for item in items:
        state.execute("UPDATE products SET stock = stock - ? WHERE product_id = ?",
                      (item["quantity"], item["product_id"]))
    if method["balance"] is not None:
        state.execute("UPDATE payment_methods SET balance = ? WHERE method_id = ?",
                      (_money(method["balance"] - total), method["method_id"]))
    state.execute("DELETE FROM cart_items")
    return success(order_id=order_id, total=total, method_id=method["method_id"], status="paid")


@tool("list_orders", "shopping_payments", "The user's orders, newest first, optionally of one status.",
      choice("status", "which orders", ORDER_STATUSES, required=False))
def list_orders(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql, params = "SELECT order_id, items, total, method_id, status, placed_at FROM orders", []
    if args.get("status"):
        sql, params = sql + " WHERE status = ?", [args["status"]]
    orders = state.query(sql + " ORDER BY placed_at DESC, order_id DESC LIMIT 30", params)
    return success(orders=[{**o, "items": json.loads(o["items"] or "[]")} for o in orders])


def _order(state: PhoneState, order_id: str) -> dict[str, Any] | Feedback:
    row = state.one("SELECT order_id, items, total, method_id, status FROM orders WHERE order_id = ?", (order_id,))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no order {order_id!r}; list_orders shows them")
    return row


@tool("cancel_order", "shopping_payments", "Cancel an order that has not shipped: the money goes back to its "
      "payment method (needs the network).", text("order_id", "the order (list_orders)"),
      writes=("orders", "products", "payment_methods"))
def cancel_order(state: PhoneState, args: dict[str, Any]) -> Feedback:
    order = _order(state, args["order_id"])
    if isinstance(order, Feedback):
        return order
    if order["status"] != "paid":
        hint = " (request_refund once it is delivered)" if order["status"] in ("shipped", "delivered") else ""
        return failure(ErrorKind.STATE_CONFLICT, f"order {args['order_id']} is {order['status']}: only a paid order "
                       f"that has not shipped can be cancelled{hint}", status=order["status"])
    if not online(state):
        return offline_failure("cancelling an order")
    state.execute("UPDATE orders SET status = 'cancelled' WHERE order_id = ?", (args["order_id"],))
    for line in json.loads(order["items"] or "[]"):
        state.execute("UPDATE products SET stock = stock + ? WHERE product_id = ?",
                      (line["quantity"], line["product_id"]))
    state.execute("UPDATE payment_methods SET balance = round(balance + ?, 2) WHERE method_id = ? AND balance IS NOT "
                  "NULL", (order["total"], order["method_id"]))
    return success(order_id=args["order_id"], status="cancelled", refunded=order["total"])


@tool("request_refund", "shopping_payments", "Ask the shop to refund a delivered order (needs the network).",
      text("order_id", "the order (list_orders)"), text("reason", "why, in the user's words"),
      writes=("refunds", "orders", "counters"))
def request_refund(state: PhoneState, args: dict[str, Any]) -> Feedback:
    order = _order(state, args["order_id"])
    if isinstance(order, Feedback):
        return order
    if order["status"] != "delivered":
        hint = " (cancel_order cancels a paid one)" if order["status"] == "paid" else ""
        return failure(ErrorKind.STATE_CONFLICT, f"order {args['order_id']} is {order['status']}: only a delivered "
                       f"order can be refunded{hint}", status=order["status"])
    if not online(state):
        return offline_failure("a refund request")
    refund_id = state.next_id("refund")
    state.execute("INSERT INTO refunds (refund_id, order_id, amount, reason, status, requested_at) VALUES "
                  "(?, ?, ?, ?, 'requested', ?)",
                  (refund_id, args["order_id"], order["total"], args["reason"], state.setting("clock", "")))
    state.execute("UPDATE orders SET status = 'refund_requested' WHERE order_id = ?", (args["order_id"],))
    return success(refund_id=refund_id, order_id=args["order_id"], amount=order["total"])

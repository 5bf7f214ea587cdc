"""The person's page, ``/ui/``, in headless Chromium against a real ``engram serve``.

One service and one browser for the module; each test a fresh browser context (its own
sessionStorage), a person and an application of its own. Every action is taken from the
keyboard (focus, Tab, typing, Enter) at least once. Chromium is Debian's (``make test``
installs it, ``.ci/packages``): without it these tests fail, they never skip.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from test_service_process import Service, running

import engram.api

SECRET = "page-secret-0123456789abcdef0123456789ab"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 30_000  # a bound on each wait for the page (a loaded machine takes what it takes)
# Collects what the page's CSP refuses, before any of the page's own scripts run.
VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
"""
HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}

expect.set_options(timeout=WAIT_MS)


def token(person: str) -> str:
    return jwt.encode({"sub": person, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")


def bearer(person: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token(person)}"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    store = tmp_path_factory.mktemp("page") / "engram.db"
    with running(store, ENGRAM_JWT_SECRET=SECRET) as serving:
        yield serving


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (make test does)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Seen:
    """What the page said besides its content: console errors, script errors, dialogs."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
def page(browser: Browser, seen: Seen) -> Iterator[Page]:
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(VIOLATIONS)
    opened = context.new_page()
    opened.on("console", lambda m: m.type == "error" and seen.console_errors.append(m.text))
    opened.on("pageerror", lambda e: seen.page_errors.append(str(e)))

    def dialog(d: Any) -> None:
        seen.dialogs.append(d.message)
        d.dismiss()

    opened.on("dialog", dialog)
    yield opened
    context.close()


def remember(service: Service, person: str, app: str, *words: str) -> list[str]:
    ids = []
    for said in words:
        answer = service.http.post(
            f"/api/v1/apps/{app}/memories", json={"memory": said}, headers=bearer(person)
        )
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["id"])
    return ids


def held(service: Service, person: str, app: str) -> dict[str, Any]:
    answer = service.http.get(f"/api/v1/apps/memories/{app}", headers=bearer(person))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def open_as(page: Page, service: Service, person: str, app: str) -> str:
    """The page as a person opens it from a link: ``/ui/#token=…&app=…``; the token."""
    minted = token(person)
    answer = page.goto(f"{service.http.base_url}/ui/#token={minted}&app={app}")
    assert answer is not None and answer.status == 200
    for name, value in HEADERS.items():
        assert answer.headers[name] == value, name
    expect(page.locator("#memories-section")).to_be_visible()
    return minted


def words_listed(page: Page) -> list[str]:
    return page.locator("#memories li .words").all_text_contents()


def test_the_list_and_its_count_and_the_token_leaves_the_address(
    page: Page, service: Service, seen: Seen
) -> None:
    remember(service, "ana", "app:notes", "likes tea", "lives in Porto", "has a cat")
    minted = open_as(page, service, "ana", "app:notes")
    expect(page.locator("#count")).to_have_text("showing 3 of 3")
    assert words_listed(page) == ["has a cat", "lives in Porto", "likes tea"]  # newest first
    assert page.evaluate("location.hash") == ""  # gone from the address and its history
    assert page.evaluate("sessionStorage.getItem('engram.token')") == minted
    page.reload()  # kept for the tab
    expect(page.locator("#count")).to_have_text("showing 3 of 3")
    assert seen.console_errors == seen.page_errors == seen.dialogs == []


def test_a_correction_refused_shows_inline_and_one_taken_replaces_the_words(
    page: Page, service: Service
) -> None:
    [kept] = remember(service, "bea", "app:notes", "drinks coffee")
    open_as(page, service, "bea", "app:notes")
    item = page.locator(f'#memories li[data-id="{kept}"]')
    item.get_by_role("button", name="Correct").focus()
    page.keyboard.press("Enter")
    field = item.get_by_label("Its words")
    expect(field).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.press("Tab")
    expect(item.get_by_role("button", name="Save")).to_be_focused()
    page.keyboard.press("Enter")  # empty words: 422, said beside the memory
    expect(item.locator(".error")).to_contain_text("empty")
    expect(field).to_be_focused()
    assert held(service, "bea", "app:notes")["memories"][0]["memory"] == "drinks coffee"
    page.keyboard.type("drinks green tea")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(item.locator(".words")).to_have_text("drinks green tea")
    expect(item.locator(".error")).to_be_empty()
    answer = held(service, "bea", "app:notes")["memories"][0]
    assert (answer["memory"], answer["corrected_by"]) == ("drinks green tea", "bea")


def test_forget_one_after_confirming(page: Page, service: Service) -> None:
    gone, stays = remember(service, "cai", "app:notes", "is vegetarian", "runs on Sundays")
    open_as(page, service, "cai", "app:notes")
    item = page.locator(f'#memories li[data-id="{gone}"]')
    item.get_by_role("button", name="Forget").focus()
    page.keyboard.press("Enter")
    expect(item.locator(".confirm")).to_contain_text("for good")  # a person's forget is real
    expect(item.get_by_role("button", name="Yes, forget it")).to_be_focused()
    page.keyboard.press("Enter")
    expect(item).to_have_count(0)
    expect(page.locator("#count")).to_have_text("showing 1 of 1")
    assert [m["id"] for m in held(service, "cai", "app:notes")["memories"]] == [stays]


def test_forget_all_confirms_the_count_and_forgets_nothing_when_there_are_more(
    page: Page, service: Service
) -> None:
    remember(service, "dan", "app:notes", "one", "two")
    open_as(page, service, "dan", "app:notes")
    page.get_by_role("button", name="Forget all…").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Yes, forget all 2")).to_be_focused()
    remember(service, "dan", "app:notes", "three")  # written while the person confirms
    page.keyboard.press("Enter")
    expect(page.locator("#forget-all-message")).to_contain_text("There are more now")
    assert held(service, "dan", "app:notes")["count"] == 3  # nothing forgotten
    expect(page.locator("#count")).to_have_text("showing 3 of 3")
    expect(page.locator("#forget-all-done")).to_be_empty()  # a refusal is no success
    page.get_by_role("button", name="Forget all…").click()
    page.get_by_role("button", name="Yes, forget all 3").click()
    # A success shows apart from refusals (a status, not the red alert), says it is for
    # good, and focus stays in the section though its button is now disabled.
    expect(page.locator("#forget-all-done")).to_have_text("Forgot 3, for good.")
    expect(page.locator("#forget-all-message")).to_be_empty()
    assert page.locator("#forget-all-done").get_attribute("role") == "status"
    expect(page.locator("#count")).to_have_text("showing 0 of 0")
    expect(page.locator("#memories-title")).to_be_focused()
    assert held(service, "dan", "app:notes")["count"] == 0


def test_markup_in_a_memory_is_shown_as_text(page: Page, service: Service, seen: Seen) -> None:
    markup = "<img src=x onerror=alert(1)>"
    remember(service, "eve", "app:notes", markup, "<script>alert(2)</script>", "<b>bold</b>")
    open_as(page, service, "eve", "app:notes")
    expect(page.locator("#count")).to_have_text("showing 3 of 3")
    assert words_listed(page) == ["<b>bold</b>", "<script>alert(2)</script>", markup]
    assert page.locator("img").count() == page.locator("main script, main b").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "page.png", full_page=True)
    assert page.evaluate("window.__violations") == []
    assert seen.console_errors == seen.page_errors == seen.dialogs == []


def test_another_person_never_sees_them(page: Page, service: Service) -> None:
    remember(service, "fay", "app:notes", "fay's secret")
    allowed = service.http.put(
        "/api/v1/memory-shares",
        json={"source": "app:notes", "reader": "app:calendar"},
        headers=bearer("fay"),
    )
    assert allowed.status_code == 200, allowed.text
    page.goto(f"{service.http.base_url}/ui/")  # no token: the person pastes one
    page.get_by_label("Your token").focus()
    page.keyboard.type(token("gus"))
    page.keyboard.press("Enter")
    expect(page.get_by_label("Application", exact=True)).to_be_visible()
    page.get_by_label("Application", exact=True).focus()
    page.keyboard.type("app:notes")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#count")).to_have_text("showing 0 of 0")
    expect(page.locator("#shares li")).to_have_count(0)
    assert "fay" not in page.locator("body").inner_text()
    page.get_by_role("button", name="Sign out").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Your token")).to_be_focused()
    assert page.evaluate("sessionStorage.getItem('engram.token')") is None


def test_a_refused_token_signs_out_and_asks_for_another(page: Page, service: Service) -> None:
    page.goto(f"{service.http.base_url}/ui/#token=not-a-token&app=app:notes")
    expect(page.locator("#message")).to_have_text("The service refused the token: sign in again.")
    expect(page.get_by_label("Your token")).to_be_focused()
    expect(page.locator("#signed-in")).to_be_hidden()
    assert page.evaluate("sessionStorage.getItem('engram.token')") is None


def test_allowances_are_listed_allowed_and_stopped(page: Page, service: Service) -> None:
    open_as(page, service, "hal", "app:notes")
    page.get_by_label("Application that remembers").focus()
    page.keyboard.type("app:notes")
    page.keyboard.press("Tab")
    page.keyboard.type("app:notes")  # its own reader: 422, said beside the form
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Allow")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#share-error")).not_to_be_empty()
    page.get_by_label("Application allowed to read it").fill("app:calendar")
    page.get_by_label("Application allowed to read it").press("Enter")
    shares = page.locator("#shares li")
    expect(shares).to_have_count(1)
    expect(shares).to_contain_text("app:calendar reads what app:notes remembers of you")
    expect(page.locator("#share-error")).to_be_empty()
    listed = service.http.get("/api/v1/memory-shares", headers=bearer("hal")).json()["shares"]
    assert [(s["source"], s["reader"]) for s in listed] == [("app:notes", "app:calendar")]
    shares.get_by_role("button").focus()
    page.keyboard.press("Enter")
    expect(shares).to_have_count(0)
    assert service.http.get("/api/v1/memory-shares", headers=bearer("hal")).json() == {"shares": []}


def test_the_page_files_carry_its_headers_and_nothing_else_is_served(service: Service) -> None:
    for name in ("app.js", "style.css", "icon.svg"):
        answer = httpx.get(f"{service.http.base_url}/ui/{name}")
        assert answer.status_code == 200
        assert {k: answer.headers[k] for k in HEADERS} == HEADERS
    assert service.http.get("/ui/..%2Fpyproject.toml").status_code == 404
    assert service.http.get("/ui/page.py").status_code == 404


def test_the_page_sets_text_only_through_text_content() -> None:
    script = (Path(engram.api.__file__).parent / "ui" / "app.js").read_text()
    for parser in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert parser not in script, parser
    assert "textContent" in script


def test_a_token_link_opened_on_the_page_is_taken_and_leaves_the_address(
    page: Page, service: Service, seen: Seen
) -> None:
    """A ``#token=`` link followed in a tab already on the page (only the hash changes):
    the token is taken, and gone from the address and its history."""
    remember(service, "hal", "app:notes", "likes figs")
    page.goto(f"{service.http.base_url}/ui/")
    expect(page.locator("#sign-in")).to_be_visible()
    minted = token("hal")
    page.evaluate("([t]) => { location.hash = `token=${t}&app=app:notes`; }", [minted])
    expect(page.locator("#memories-section")).to_be_visible()
    expect(page.locator("#count")).to_have_text("showing 1 of 1")
    assert page.evaluate("location.hash") == ""
    assert "token" not in page.evaluate("location.href")
    assert seen.console_errors == seen.page_errors == []


def test_the_applications_that_remember_the_person_are_listed(page: Page, service: Service) -> None:
    remember(service, "ida", "app:notes", "likes figs", "swims")
    remember(service, "ida", "app:calendar", "dentist on friday")
    remember(service, "gus", "app:secret", "not ida's")
    open_as(page, service, "ida", "app:notes")
    listed = page.locator("#apps li button")
    expect(listed).to_have_text(["app:calendar (1)", "app:notes (2)"])  # hers only
    listed.first.click()
    expect(page.locator("#memories-title")).to_have_text("What app:calendar remembers of you")
    expect(page.locator("#memories-title")).to_be_focused()
    answer = service.http.get("/api/v1/apps", headers=bearer("ida"))
    assert answer.json() == {
        "apps": [{"app": "app:calendar", "count": 1}, {"app": "app:notes", "count": 2}]
    }


def _violations(page: Page) -> list[tuple[str, str, list[Any]]]:
    """What axe-core (the copy packaged with axe-playwright-python) finds on the page as
    it stands: each rule broken, its impact and the elements that break it."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found]


def test_axe_finds_nothing_wrong_in_any_state_of_the_page(page: Page, service: Service) -> None:
    """Every state a person meets: signed out; an application's memories with the
    applications and allowances; a correction open and refused; a forget to confirm; a
    forget-all done."""
    found = {}
    page.goto(f"{service.http.base_url}/ui/")
    expect(page.locator("#sign-in")).to_be_visible()
    found["signed out"] = _violations(page)
    [kept, swims] = remember(service, "kim", "app:notes", "drinks coffee", "swims")
    remember(service, "kim", "app:calendar", "dentist on friday")
    link = f"token={token('kim')}&app=app:notes"  # a link followed in the open tab
    page.evaluate("([link]) => { location.hash = link; }", [link])
    expect(page.locator("#apps li button")).to_have_count(2)
    found["listed"] = _violations(page)
    item = page.locator(f'#memories li[data-id="{kept}"]')
    item.get_by_role("button", name="Correct").click()
    item.get_by_label("Its words").fill("")
    item.get_by_role("button", name="Save").click()
    expect(item.locator(".error")).to_contain_text("empty")
    page.get_by_label("Application that remembers").fill("app:notes")
    page.get_by_label("Application allowed to read it").fill("app:notes")
    page.get_by_role("button", name="Allow").click()
    expect(page.locator("#share-error")).not_to_be_empty()
    found["refused"] = _violations(page)
    other = page.locator(f'#memories li[data-id="{swims}"]')
    other.get_by_role("button", name="Forget").click()
    expect(other.locator(".confirm")).to_contain_text("for good")
    found["confirming"] = _violations(page)
    page.reload()
    expect(page.locator("#memories-section")).to_be_visible()
    page.get_by_role("button", name="Forget all").click()
    page.get_by_role("button", name="Yes, forget all").click()
    expect(page.locator("#forget-all-done")).not_to_be_empty()
    found["forgot all"] = _violations(page)
    assert found == {state: [] for state in found}

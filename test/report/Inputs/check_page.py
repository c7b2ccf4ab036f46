"""Renders a shardc report in headless Chromium and checks the DOM it dumps (after the page's
script ran): the summary, the mesh, one sharding drawing per argument group, the memory bars,
the collectives table sorted by its script, the sections timeline, the search, the measured
figures and the curves. Exits 77 (skipped) when Chromium is missing, saying so.
  check_page.py PAGE --devices N [--sections] [--search] [--stats] [--metrics] [--screenshot PNG]
"""
import argparse
import os
import sys
import tempfile
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], ""

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, tag=None, cls=None, id=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and
                (cls is None or cls in n.classes()) and (id is None or n.attrs.get("id") == id)]

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


VOID = {"meta", "br", "img", "input", "link", "hr", "line", "rect", "circle", "polyline", "path"}


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.root = Node("#root", [], None)
        self.at = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.at)
        self.at.children.append(n)
        if tag not in VOID:
            self.at = n

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, attrs, self.at))

    def handle_endtag(self, tag):
        n = self.at
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.at = n.parent

    def handle_data(self, data):
        self.at.text += data


def one(nodes, what):
    if len(nodes) != 1:
        sys.exit(f"FAIL: expected one {what}, found {len(nodes)}")
    return nodes[0]


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--devices", type=int, required=True)
    for flag in ("--sections", "--search", "--stats", "--metrics"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("--screenshot")
    a = ap.parse_args(argv)
    chromium = browser.find_chromium()
    if not chromium:
        print("SKIPPED: Chromium is not installed (apt-get install chromium; scripts/setup.sh "
              "installs it), so the report cannot be rendered in a browser here")
        sys.exit(browser.SKIP)
    with tempfile.TemporaryDirectory() as profile:
        text, seconds = browser.dump_dom(chromium, a.page, profile)
        if a.screenshot:
            browser.screenshot(chromium, a.page, a.screenshot, profile)
    dom = Dom()
    dom.feed(text)
    root = dom.root
    body = one(root.find("body"), "body")
    check(body.attrs.get("data-ready") == "1", "the page's script ran")
    print(f"chromium rendered {os.path.getsize(a.page)} bytes in {seconds:.2f} s "
          f"(script done {body.attrs.get('data-ready-ms')} ms after navigation)")

    summary = one(root.find(id="summary"), "#summary")
    facts = {r.find("td")[0].all_text(): r.find("td")[1].all_text()
             for r in summary.find("tr") if len(r.find("td")) == 2}
    for k in ("mode", "target", "mesh", "estimated step", "memory per device"):
        check(k in facts and facts[k], f"summary states the {k}: {facts.get(k)!r}")

    mesh = one(root.find(id="mesh"), "#mesh")
    check(len(mesh.find("g", cls="device")) == a.devices, f"the mesh draws {a.devices} devices")

    shard = one(root.find(id="shardings"), "#shardings")
    groups = shard.find("details", cls="arg-group")
    check(len(groups) > 0, f"{len(groups)} argument groups")
    drawn = [g for g in groups if len(g.find("svg", cls="sharding-drawing")) == 1 and
             g.find("p", cls="members") and g.find("p", cls="members")[0].all_text().strip()]
    check(len(drawn) == len(groups), f"one sharding drawing per argument group, each listing its "
          f"members ({len(drawn)} of {len(groups)})")
    kinds = {g.attrs.get("data-kind") for g in groups}
    check({"param", "opt_state", "input"} <= kinds, f"groups of every kind: {sorted(kinds)}")
    cut = [g for g in groups if g.find("line", cls="cut")]
    check(cut, f"{len(cut)} groups drawn cut along a split dimension")

    memory = one(root.find(id="memory"), "#memory")
    bars = memory.find("svg", cls="memory-bars")
    check(len(bars) == 1 and len(bars[0].find("rect", cls="segment")) >= 4 and
          bars[0].find(cls="capacity"), "memory bars by kind against the capacity")
    if a.stats:
        check(bars[0].find("rect", cls="measured"), "the measured peak beside the estimate")

    time_ = one(root.find(id="time"), "#time")
    check(len(time_.find("svg", cls="time-bars")[0].find("rect", cls="bar")) > 0,
          "step-time bars by op kind")
    table = one(root.find("table", id="collectives"), "#collectives")
    rows = table.find("tbody")[0].find("tr")
    totals = [float(r.find("td")[6].attrs["data-v"]) for r in rows]
    check(len(rows) > 0 and totals == sorted(totals, reverse=True),
          f"{len(rows)} collective rows, sorted by total time by the page's script")

    if a.sections:
        sec = one(root.find(id="sections"), "#sections")
        spans = sec.find("rect", cls="span")
        check(len(spans) > 0, f"the sections timeline has {len(spans)} sections")
        phases = {c for s in spans for c in s.classes()} & {"forward", "backward", "optimizer"}
        check(len(phases) >= 2, f"sections coloured by phase: {sorted(phases)}")
    if a.search:
        search = one(root.find(id="search"), "#search")
        check(len(search.find("rect", cls="chosen")) == 1 and
              len(search.find("svg", cls="search-bars")[0].find("rect", cls="bar")) >= 3,
              "the baselines beside the chosen plan")
        check(len(search.find("ol", cls="decisions")) == 1, "the search's decisions in order")
    if a.stats:
        measured = one(root.find(id="measured"), "#measured")
        check(len(measured.find("table", id="measured-ops")[0].find("tr")) > 2,
              "measured against estimated per op kind")
        if a.sections:
            check(len(measured.find("table", id="measured-sections")) == 1,
                  "measured against estimated per section")
    if a.metrics:
        curves = one(root.find(id="curves"), "#curves")
        loss = one(curves.find("svg", id="loss-curve"), "#loss-curve")
        line = loss.find("polyline", cls="loss")
        check(line and len(line[0].attrs["points"].split()) >= 2, "a loss curve over the steps")
        check(len(curves.find("svg", id="throughput-curve")) == 1, "a throughput curve")
    print("PASS")


if __name__ == "__main__":
    main()

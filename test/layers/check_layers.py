#!/usr/bin/env python3
"""The static libraries of lib/ form no cycle: reads every target_link_libraries of
lib/CMakeLists.txt and fails naming a cycle if one library reaches itself."""
import re
import sys


def links(cmake_text):
    graph = {}
    for m in re.finditer(r"target_link_libraries\(\s*(\w+)(.*?)\)", cmake_text, re.S):
        deps = re.findall(r"\bshardc_\w+", m.group(2))
        graph.setdefault(m.group(1), set()).update(deps)
    for m in re.finditer(r"add_library\(\s*(shardc_\w+)", cmake_text):
        graph.setdefault(m.group(1), set())
    return graph


def find_cycle(graph):
    state = {}  # 1: on the path, 2: done

    def visit(node, path):
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep, path + [dep])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [node])
            if cycle:
                return cycle
    return None


def main():
    graph = links(open(sys.argv[1]).read())
    if len(graph) < 10:
        sys.exit(f"check_layers.py: found only {len(graph)} libraries in {sys.argv[1]}")
    cycle = find_cycle(graph)
    if cycle:
        sys.exit("library cycle: " + " -> ".join(cycle))
    print(f"ok: {len(graph)} libraries, no cycle")


if __name__ == "__main__":
    main()

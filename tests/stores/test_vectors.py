"""A copy of an owner's keys updated in place searches as a copy read afresh would,
and a large one searched through its 8-bit index first finds what a full search finds."""

from __future__ import annotations

import numpy as np
import pytest

from pegasus.model import CLAIM_KEY, EmbeddingKey
from pegasus.stores import vectors as vectors_module
from pegasus.stores.vectors import KeyVectors


def keys(ids: list[str], kind: str = "node") -> list[EmbeddingKey]:
    return [EmbeddingKey.model_construct(id=i, text=i, ref=i, kind=kind, vector=[]) for i in ids]


def test_an_updated_copy_equals_a_fresh_one() -> None:
    rng = np.random.default_rng(7)
    first = keys([f"n{i}" for i in range(40)]) + keys([f"c{i}" for i in range(60)], CLAIM_KEY)
    vectors = list(rng.standard_normal((100, 16)).astype(np.float32))
    copy = KeyVectors.of(first, vectors, 1)
    # Two held keys change (one becomes a claim), two are new, one new key comes twice.
    changed = keys(["n3"], CLAIM_KEY) + keys(["c5", "x1", "x2", "x1"])
    new_vectors = list(rng.standard_normal((5, 16)).astype(np.float32))
    updated = copy.updated(changed, new_vectors, 2)

    latest = {key.id: (key, vector) for key, vector in zip(first, vectors, strict=True)}
    latest |= {key.id: (key, vector) for key, vector in zip(changed, new_vectors, strict=True)}
    fresh = KeyVectors.of([k for k, _ in latest.values()], [v for _, v in latest.values()], 2)

    assert updated.version == 2 and len(updated.keys) == len(fresh.keys) == 102
    np.testing.assert_allclose(updated.mean, fresh.mean, rtol=1e-5)
    queries = rng.standard_normal((6, 16)).astype(np.float32)
    for kinds in (None, (CLAIM_KEY,), ("node",)):
        got = updated.nearest(queries, 10, kinds)
        want = fresh.nearest(queries, 10, kinds)
        for row, expected in zip(got, want, strict=True):
            assert [k.id for k, _ in row] == [k.id for k, _ in expected]
            np.testing.assert_allclose([s for _, s in row], [s for _, s in expected], rtol=1e-5)
    assert len(copy.keys) == 100 and copy.version == 1  # the held copy is left as it was
    assert "x1" not in {k.id for k, _ in copy.nearest(queries[:1], 100, None)[0]}


def test_an_updated_copy_counts_claim_words_as_a_fresh_one() -> None:
    def claim(ident: str, text: str) -> EmbeddingKey:
        return EmbeddingKey.model_construct(id=ident, text=text, ref=ident, kind=CLAIM_KEY)

    rng = np.random.default_rng(3)
    first = [claim("c1", "Lena sails"), claim("c2", "Lena hikes, Lena sails"), *keys(["Lena"])]
    copy = KeyVectors.of(first, list(rng.standard_normal((3, 8))), 1)
    assert [copy.claims_holding(w) for w in ("LENA", "sails", "hikes", "omar")] == [2, 2, 1, 0]
    # Words as the full-text index keeps them: "won't" is not "won".
    wont = KeyVectors.of([claim("c4", "Omar won't sail")], [[1.0] * 8], 1)
    assert wont.claims_holding("won") == 0 and wont.claims_holding("won't") == 1
    # One claim is rewritten, one becomes a name, a new one comes twice.
    changed = [claim("c2", "Omar hikes"), claim("c3", "Omar sails"), claim("c3", "Omar sails"),
               *keys(["c1"])]  # fmt: skip
    updated = copy.updated(changed, list(rng.standard_normal((4, 8))), 2)
    assert vectors_module.WORDS in updated.counted  # carried over, not counted again
    empty = KeyVectors.of([], [], 0)
    empty.claim_words()
    started = empty.updated(first, list(rng.standard_normal((3, 8))), 1)
    assert vectors_module.WORDS in started.counted and started.claims_holding("lena") == 2
    latest = {key.id: key for key in [*first, *changed]}
    fresh = KeyVectors.of(list(latest.values()), list(rng.standard_normal((4, 8))), 2)
    words = ("lena", "sails", "hikes", "omar")
    assert [updated.claims_holding(w) for w in words] == [0, 1, 1, 2]
    assert [fresh.claims_holding(w) for w in words] == [0, 1, 1, 2]


def test_an_empty_copy_takes_its_first_keys() -> None:
    empty = KeyVectors.of([], [], 0)
    updated = empty.updated(keys(["a"]), [np.ones(4, np.float32)], 1)
    (found,) = updated.nearest([np.ones(4)], 1, None)
    assert [k.id for k, _ in found] == ["a"] and updated.version == 1


def test_a_large_part_finds_the_exact_nearest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where keys crowd closer than 8-bit steps can tell apart, the index alone ranks
    them wrongly; asking it for more until nothing unseen could win gives the exact
    answer."""
    rng = np.random.default_rng(3)
    query = rng.standard_normal(64).astype(np.float32)
    query /= np.linalg.norm(query)
    # 1,500 keys crowded around the query (cosines within a few thousandths), 1,500 anywhere.
    crowd = query + 0.01 * rng.standard_normal((1500, 64)).astype(np.float32)
    vectors = list(np.vstack([crowd, rng.standard_normal((1500, 64)).astype(np.float32)]))
    claims = keys([f"c{i}" for i in range(3000)], CLAIM_KEY)
    exact = KeyVectors.of(claims, vectors, 1).nearest([query], 5, (CLAIM_KEY,))[0]
    monkeypatch.setattr(vectors_module, "SCAN_FROM", 1000)
    indexed = KeyVectors.of(claims, vectors, 1)
    part = indexed.only((CLAIM_KEY,))
    assert part.index is not None
    _, rough = part.index.search(query[None], 5)
    assert [claims[i].id for i in rough[0]] != [k.id for k, _ in exact]  # the index alone errs
    found = indexed.nearest([query], 5, (CLAIM_KEY,))[0]
    assert [k.id for k, _ in found] == [k.id for k, _ in exact]
    np.testing.assert_allclose([s for _, s in found], [s for _, s in exact], rtol=1e-5)
    best = vectors[int(exact[0][0].id.removeprefix("c"))]
    np.testing.assert_allclose(found[0][0].vector, best / np.linalg.norm(best), rtol=1e-5)


@pytest.mark.parametrize("dims", [24, 1536])
def test_the_index_is_never_further_from_the_cosine_than_its_bound(
    monkeypatch: pytest.MonkeyPatch, dims: int
) -> None:
    """For every key and query, dimensions of uneven spread and one no key uses."""
    monkeypatch.setattr(vectors_module, "SCAN_FROM", 100)
    rng = np.random.default_rng(11)
    spread = rng.standard_normal((400, dims)) * rng.uniform(0.01, 1, dims)
    spread[:, 5] = 0
    part = KeyVectors.of(keys([f"n{i}" for i in range(400)]), list(spread), 1).only(None)
    queries = rng.standard_normal((30, dims)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    rough, found = part.index.search(queries, len(part.keys))
    rough = np.take_along_axis(rough, np.argsort(found, axis=1), axis=1)
    bound = np.abs(queries) @ part.half_steps
    assert (np.abs(rough - queries @ part.matrix) <= bound[:, None] + 1e-5).all()


@pytest.mark.parametrize("scan_from", [1000, vectors_module.SCAN_FROM])
def test_several_queries_at_once_find_what_each_finds_alone(
    monkeypatch: pytest.MonkeyPatch, scan_from: int
) -> None:
    """Several queries asked together each get what they get asked alone (through
    the index, where the part is large)."""
    rng = np.random.default_rng(5)
    monkeypatch.setattr(vectors_module, "SCAN_FROM", scan_from)
    copy = KeyVectors.of(
        keys([f"n{i}" for i in range(3000)]), list(rng.standard_normal((3000, 32))), 1
    )
    assert (copy.only(("node",)).index is not None) == (scan_from < 3000)
    queries = rng.standard_normal((5, 32)).astype(np.float32)
    for count in range(2, 6):
        together = copy.nearest(queries[:count], 7, ("node",))
        alone = [copy.nearest(query[None], 7, ("node",))[0] for query in queries[:count]]
        assert len(together) == count
        for got, want in zip(together, alone, strict=True):
            assert [k.id for k, _ in got] == [k.id for k, _ in want]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-5)

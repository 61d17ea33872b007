"""Recall settings as data, with named presets: the design writeup's baseline and
the project's own defaults (see docs/recall.md for the measurements behind each
difference). A benchmark can run both on the same graph."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class RecallSettings:
    name: str
    # Seeding
    use_phrases: bool  # embed runs of adjacent content words too ("red tape")
    use_possessives: bool  # "my boss" also as "<user's name>'s boss"
    candidates: int  # keys fetched per query unit from the (vector) index
    hits_per_unit: int  # most keys one unit may seed (0 = no limit)
    seed_threshold: float  # centred cosine at which a unit seeds a key
    clear_winner_floor: float  # ...or a top hit this high,
    clear_winner_margin: float  # ...this far above the runner-up
    graded_seeds: bool  # seed activation grows with match strength (else 1.0)
    relation_needs_anchor: bool  # a relation hit seeds only next to a node seed
    ordinariness_weight: float  # how much a key's likeness to everyday words costs it
    # Spreading
    hops: int
    spread_factor: float
    block_self: bool  # the user's own node receives but does not pass activation
    co_episode_bonus: float
    # Budget and injection
    fire_threshold: float
    max_fired: int
    forward_share: float
    context_threshold: float
    snippets_per_node: int
    max_tokens: int  # 0 = no token budget
    show_dates: bool
    show_properties: bool
    # Claims found by what they say (recall/cues.py, recall/rank.py); off in the
    # writeup's baseline, so only the project's presets need to name them.
    claim_cues: bool = False  # search claims by meaning and by words, beside the names
    claim_candidates: int = 30  # claims fetched per cue kind
    claim_threshold: float = 0.30  # cosine at which a message sharing a word reaches a claim
    claim_sure: float = 0.45  # cosine at which the message reaches a claim by meaning alone
    claim_margin: float = 0.04  # ...or by which the best claim beats the next, from claim_threshold
    common_word_zipf: float = 5.5  # words at least this frequent in English are no cue
    words_gate: float = 1.0  # how uncommon (summed Zipf below that) a claim's matched words must be
    claim_weight: float = 3.0  # what a claim's own cue adds to its place in the block
    time_weight: float = 1.0  # ...and being about the time the message names ("in May")
    max_lines: int = 24  # claim lines in a block ranked by score
    line_share: float = 0.75  # of the token budget the ranked lines take before the snippets
    max_snippets: int = 4  # snippets of the best-ranked claims
    show_history: bool = False  # claims no longer current, when the message's cue reaches them
    history_cue: float = 0.3  # the cue score a past claim needs to be shown
    max_property_lines: int = 2  # hot nodes whose properties are shown, when ranked


BASELINE = RecallSettings(
    name="baseline",
    use_phrases=False,
    use_possessives=False,
    candidates=50,
    hits_per_unit=0,
    seed_threshold=0.30,
    clear_winner_floor=0.15,
    clear_winner_margin=0.15,
    graded_seeds=False,
    relation_needs_anchor=False,
    ordinariness_weight=0.0,
    hops=2,
    spread_factor=0.6,
    block_self=False,
    co_episode_bonus=0.15,
    fire_threshold=0.30,
    max_fired=8,
    forward_share=0.7,
    context_threshold=0.60,
    snippets_per_node=4,
    max_tokens=0,
    show_dates=False,
    show_properties=False,
)

DEFAULT = replace(
    BASELINE,
    name="default",
    candidates=20,
    use_phrases=True,
    use_possessives=True,
    hits_per_unit=3,
    seed_threshold=0.40,
    clear_winner_floor=0.30,
    graded_seeds=True,
    relation_needs_anchor=True,
    ordinariness_weight=0.5,
    claim_cues=True,
    show_history=True,
    block_self=True,
    max_tokens=400,
    show_dates=True,
    show_properties=True,
)

PRESETS = {preset.name: preset for preset in (BASELINE, DEFAULT)}

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
    # Claims found by what they say (recall/cues.py)
    claim_cues: bool  # search claims by meaning and by words, beside the names
    claim_candidates: int  # claims fetched per cue kind
    claim_threshold: float  # cosine at which a message sharing a word reaches a claim
    claim_sure: float  # cosine at which the message reaches a claim by meaning alone
    claim_margin: float  # ...or by which the best claim beats the next, from claim_threshold
    common_word_zipf: float  # words at least this frequent in English are no cue
    words_gate: float  # how uncommon (summed Zipf below that) a claim's matched words must be
    claim_weight: float  # what a claim's own cue adds to its place in the block
    time_weight: float  # ...and being about the time the message names ("in May")
    max_lines: int  # claim lines in a block ranked by score
    line_share: float  # of the token budget the ranked lines take before the snippets
    max_snippets: int  # snippets of the best-ranked claims
    show_history: bool  # claims no longer current, when the message's cue reaches them
    history_cue: float  # the cue score a past claim needs to be shown
    max_property_lines: int  # hot nodes whose properties are shown, when ranked
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
    claim_cues=False,
    claim_candidates=30,
    claim_threshold=0.30,
    claim_sure=0.45,
    claim_margin=0.04,
    common_word_zipf=5.5,
    words_gate=1.0,
    claim_weight=3.0,
    time_weight=1.0,
    max_lines=24,
    line_share=0.75,
    max_snippets=4,
    show_history=False,
    history_cue=0.3,
    max_property_lines=2,
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

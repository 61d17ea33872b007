// The daily pass, in bounded transactions: pegasus.time.decay.edge_state as of $now,
// every constant of the rule a parameter ($rates by stability, $dormant_below).
// Strength comes from strength0 and touched_at, so running it twice or late equals
// running it once on time; a touch in the future counts as now.
// One owner at a time: starting from the owner's nodes keeps the pass off other
// owners' relationships (their properties have no index across types).
MATCH (:Entity {user: $user})-[r]->(:Entity)
CALL (r) {
  // Whole seconds and the nanoseconds beyond them: the same days, to the
  // microsecond, as the Python rule and SQLite.
  WITH r, duration.inSeconds(r.touched_at, $now) AS age
  WITH r, (age.seconds + age.nanosecondsOfSecond / 1.0e9) / 86400.0 AS days
  WITH r, r.strength0 * exp(-$rates[r.stability] * CASE WHEN days > 0 THEN days ELSE 0.0 END)
          AS strength
  SET r.strength = strength,
      r.dormant = strength < $dormant_below,
      r.expired = r.expires_at IS NOT NULL AND r.expires_at <= $now
} IN TRANSACTIONS OF $batch_size ROWS

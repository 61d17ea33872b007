// The daily pass, in bounded transactions: strength from strength0 and touched_at
// as of $now, so running it twice or late equals running it once on time.
// One owner at a time: starting from the owner's nodes keeps the pass off other
// owners' relationships (their properties have no index across types).
MATCH (:Entity {user: $user})-[r]->(:Entity)
CALL (r) {
  WITH r, toFloat(duration.inSeconds(r.touched_at, $now).seconds) / 86400.0 AS days
  WITH r, r.strength0 * exp(-$rates[r.stability] * CASE WHEN days > 0 THEN days ELSE 0.0 END)
          AS strength
  SET r.strength = strength,
      r.dormant = strength < $dormant_below,
      r.expired = r.expires_at IS NOT NULL AND r.expires_at <= $now
} IN TRANSACTIONS OF $batch_size ROWS

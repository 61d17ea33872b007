// strength0 = min(strength as of $now + $amount, 100); touched now; dormancy cleared.
MATCH ()-[r]->()
WHERE elementId(r) IN $refs AND r.user = $user
WITH r, toFloat(duration.inSeconds(r.touched_at, $now).seconds) / 86400.0 AS days
WITH r, r.strength0 * exp(-$rates[r.stability] * CASE WHEN days > 0 THEN days ELSE 0.0 END)
        + $amount AS raised
WITH r, CASE WHEN raised > 100.0 THEN 100.0 ELSE raised END AS strength
SET r.strength = strength, r.strength0 = strength, r.touched_at = $now, r.dormant = false
RETURN count(r) AS reinforced

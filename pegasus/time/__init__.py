"""Time: how memories fade and strengthen, and the daily schedule."""

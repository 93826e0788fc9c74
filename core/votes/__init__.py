"""Blind votes on side-by-side replies of several memory methods: the vote store, Bradley-Terry
rankings with bootstrap intervals, the automatic measures against people's choices, and scripted
comparisons to vote on (`python -m core compare`). See docs/compare.md."""

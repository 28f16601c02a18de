"""in progress"""

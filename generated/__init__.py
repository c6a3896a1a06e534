"""Typed models generated from schema/ by tools/generate_models.py. Do not edit."""

masks.py	masked_update(c128[:], c128[:])

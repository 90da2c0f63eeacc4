"""The parts of `tft-pipeline init`'s draft (`pipeline.spec_draft`)."""

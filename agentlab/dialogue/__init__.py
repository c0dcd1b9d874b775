"""The dialogue layer: prompt templates from data/prompts/ and the one ask-until-the-reply-parses loop."""

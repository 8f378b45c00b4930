"""External campaigns: answers collected elsewhere (Label Studio, a survey tool, a script),
brought to the audit from files. ``fields`` checks one answer row against the campaign's
question set; ``mapping`` reads the file that renames columns and values; ``readers`` turns
each supported file into rows; ``importing`` writes a file's answers in one transaction.
"""

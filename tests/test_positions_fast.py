"""The regex scanners place every path (and its order) as the character-by-character ones they replaced did."""

from trainspec.read.files import parse


def spans(name: str, text: str) -> dict:
    def at(p):
        return None if p is None else (p.line, p.column)

    doc = parse(name, text)
    return {k: tuple(at(x) for x in (v.key, v.value, v.key_end, v.value_end)) for k, v in doc.positions.items()}


def test_toml_dotted_and_quoted_keys_arrays_of_tables_multiline_strings_and_crlf():
    text = 'a . "b.c" = 1\n[[t]]\n[t.u]\nx = """q\n"""\n[[t]]\ny = [1, {z = 1979-05-27 07:32:00}]\r\n'
    found = spans("c.toml", text)
    assert list(found.items()) == [
        (("a",), ((1, 1), None, (1, 10), None)),
        (("a", "b.c"), ((1, 1), (1, 13), (1, 10), (1, 14))),
        (("t",), ((2, 1), (2, 1), (2, 6), (2, 6))),
        (("t", 0), (None, (2, 1), None, (2, 6))),
        (("t", 0, "u"), ((3, 1), (3, 1), (3, 6), (3, 6))),
        (("t", 0, "u", "x"), ((4, 1), (4, 5), (4, 2), (5, 4))),
        (("t", 1), (None, (6, 1), None, (6, 6))),
        (("t", 1, "y"), ((7, 1), (7, 5), (7, 2), (7, 35))),
        (("t", 1, "y", 0), (None, (7, 6), None, (7, 7))),
        (("t", 1, "y", 1), (None, (7, 9), None, (7, 34))),
        (("t", 1, "y", 1, "z"), ((7, 10), (7, 14), (7, 11), (7, 33))),
    ]


def test_json_escaped_and_repeated_keys_keep_the_first_place_and_containers_follow_what_they_hold():
    text = '{"a": {"k": [1, {"k": 2}]},\n "a": {"n": "\\u00e9"}, "\\"q": null}'
    doc = parse("c.json", text)
    assert [(p.line, p.column, p.end_line, p.end_column, p.config_path) for p in doc.problems] == [(2, 2, 2, 5, "a")]
    assert list(spans("c.json", text).items()) == [
        (("a", "k", 0), (None, (1, 14), None, (1, 15))),
        (("a", "k", 1, "k"), ((1, 18), (1, 23), (1, 21), (1, 24))),
        (("a", "k", 1), (None, (1, 17), None, (1, 25))),
        (("a", "k"), ((1, 8), (1, 13), (1, 11), (1, 26))),
        (("a",), ((1, 2), (1, 7), (1, 5), (1, 27))),
        (("a", "n"), ((2, 8), (2, 13), (2, 11), (2, 21))),
        (('"q',), ((2, 24), (2, 31), (2, 29), (2, 35))),
        ((), (None, (1, 1), None, (2, 36))),
    ]

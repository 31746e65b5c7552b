"""Independent reference for RULER's tasks (engine/tasks/ruler.c): the two
metrics re-implemented as RULER defines them, and each item's references
recounted from its prompt text alone.

usage: ruler_ref.py score IN
  IN: JSON {"cases": [{"pred": text, "refs": [strings]}]}.
  OUT: one line per case, its string_match_all and string_match_part
  scores (0 to 1, not RULER's percent), then one line of the two means,
  each %.17g.
usage: ruler_ref.py recount FILE
  FILE: JSON lines from `ahascope tasks` (a RULER kind). OUT: one line per
  item, "ok" when the references the prompt implies equal its "answers"
  (as sets) and its metric is "all", else "bad: why"."""
import json
import re
import sys
from collections import Counter


def string_match_all(pred, refs):
    return sum(1.0 if r.lower() in pred.lower() else 0.0 for r in refs) / len(refs)


def string_match_part(pred, refs):
    return max(1.0 if r.lower() in pred.lower() else 0.0 for r in refs)


def score(path):
    cases = json.load(open(path))["cases"]
    alls, parts = [], []
    for c in cases:
        a, p = string_match_all(c["pred"], c["refs"]), string_match_part(c["pred"], c["refs"])
        alls.append(a)
        parts.append(p)
        print("%.17g %.17g" % (a, p))
    print("%.17g %.17g" % (sum(alls) / len(alls), sum(parts) / len(parts)))


NEEDLE = re.compile(r"One special magic (number|UUID) for (\S+) is (\S+?)\.(?= |$)")


def niah_refs(it, prompt):
    """The values stated for the keys the question names."""
    m = re.search(r"Which special magic (?:number|UUID)s? for (.+?) does the text above give\?", prompt)
    if not m:
        return None, "no question"
    keys = re.split(r", and | and |, ", m.group(1))
    body = prompt[: m.start()]
    stated = {}
    for typ, key, value in NEEDLE.findall(body):
        stated.setdefault(key, []).append(value)
    refs = []
    for k in keys:
        if k not in stated:
            return None, "key %s is never stated" % k
        refs += stated[k]
    want = {"niah_multikey_1": 4, "niah_multiquery": 4}.get(it["task"])
    if want and len(stated) != want:
        return None, "%d keys stated, not %d" % (len(stated), want)
    if it["task"] in ("niah_multikey_2", "niah_multikey_3"):
        # the haystack is distractor needles alone: nothing but needles between the intro and the padding
        intro_end = body.index("afterwards.") + len("afterwards.")
        rest = NEEDLE.sub("", body[intro_end:]).split()
        if len(rest) > 90:  # the cut last needle and the padding before the question
            return None, "%d words in the haystack are no needle" % len(rest)
    return refs, None


def vt_refs(prompt):
    m = re.search(r"Which variables in the text above are given the value (\d+)\?", prompt)
    if not m:
        return None, "no question"
    value = m.group(1)
    holds = set()
    assigns = re.findall(r"VAR ([A-Z]{5}) = (VAR [A-Z]{5}|\d+)\.", prompt[: m.start()])
    for _ in assigns:  # follow the chain as far as it goes
        for x, y in assigns:
            if y == value or (y.startswith("VAR ") and y[4:] in holds):
                holds.add(x)
    return sorted(holds), None


def cwe_refs(prompt):
    lists = re.split(r"Remember the words that occur most often\. ", prompt)
    if len(lists) != 3:
        return None, "%d lists, not an example and one" % (len(lists) - 1)
    main = lists[2].split(" Question:")[0]
    words = re.findall(r"(?:^| )(\d+)\. (\S+)", main)
    if [int(n) for n, _ in words] != list(range(1, len(words) + 1)):
        return None, "the list is not numbered 1, 2, ..."
    top = Counter(w for _, w in words).most_common()
    if len(top) <= 10 or top[9][1] <= top[10][1]:
        return None, "no ten words occur more often than the rest"
    return [w for w, _ in top[:10]], None


def fwe_refs(prompt):
    body = prompt.split("than the others. ", 1)[1].split(" Question:")[0]
    counts = Counter(w for w in body.split() if re.fullmatch(r"[a-z]{6}|\.\.\.", w))
    top = [(w, c) for w, c in counts.most_common() if w != "..."]
    if len(top) < 4 or top[2][1] <= top[3][1]:
        return None, "no three coded words occur more often than the rest"
    if counts["..."] <= top[0][1]:
        return None, "the dots are not the most frequent"
    return [w for w, _ in top[:3]], None


def recount(path):
    for line in open(path):
        if not line.strip():
            continue
        it = json.loads(line)
        p, t = it["prompt"], it["task"]
        if t.startswith("niah_"):
            refs, why = niah_refs(it, p)
        elif t == "vt":
            refs, why = vt_refs(p)
        elif t == "cwe":
            refs, why = cwe_refs(p)
        elif t == "fwe":
            refs, why = fwe_refs(p)
        else:
            refs, why = None, "not a RULER kind: " + t
        if why is None and sorted(refs) != sorted(it["answers"]):
            why = "references %s, the item says %s" % (refs, it["answers"])
        if why is None and it.get("metric") != "all":
            why = "metric %s" % it.get("metric")
        if why is None and t != "cwe" and t != "fwe" and not all(r in it["answer"] for r in refs):
            why = "the answer %r lacks a reference" % it["answer"]
        print("ok" if why is None else "bad: " + why)


if __name__ == "__main__":
    {"score": score, "recount": recount}[sys.argv[1]](sys.argv[2])

//go:build clis_e2e && linux

package clis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// exampleTeam is the example's directory, whose real-CLI variant the tests run.
const exampleTeam = "../../examples/team"

// teamTask is a task of the planner's list, with what its implementer writes.
type teamTask struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	File   string `json:"file"`
	code   string
	test   string
}

var teamTasks = []teamTask{
	{ID: "slug", Title: "slugify(title)", Detail: "a URL slug: lower case, words joined by hyphens", File: "work/slug.py",
		code: "import re\n\n\ndef slugify(title):\n    return \"-\".join(re.findall(r\"[a-z0-9]+\", title.lower()))\n",
		test: "import unittest\n\nfrom slug import slugify\n\n\nclass SlugTest(unittest.TestCase):\n    def test_words(self):\n        self.assertEqual(slugify(\"Hello, World!\"), \"hello-world\")\n"},
	{ID: "words", Title: "word_count(text)", Detail: "how many words a text has", File: "work/words.py",
		code: "def word_count(text):\n    return len(text.split())\n",
		test: "import unittest\n\nfrom words import word_count\n\n\nclass WordsTest(unittest.TestCase):\n    def test_count(self):\n        self.assertEqual(word_count(\"a b  c\"), 3)\n"},
	{ID: "titles", Title: "title_case(text)", Detail: "each word capitalised", File: "work/titles.py",
		code: "def title_case(text):\n    return \" \".join(w[:1].upper() + w[1:] for w in text.split())\n",
		test: "import unittest\n\nfrom titles import title_case\n\n\nclass TitlesTest(unittest.TestCase):\n    def test_title(self):\n        self.assertEqual(title_case(\"a tale of code\"), \"A Tale Of Code\")\n"},
}

// changelogLine is the line an implementer adds to work/CHANGELOG.md.
func (t teamTask) changelogLine() string { return "- " + t.Title + ": " + t.Detail }

// teamModel scripts the example's agents. Its prompts are the example's,
// which carry no marker: each conversation is known by a phrase of its
// prompt (an implementer's names its task's title, which the planner's
// list gave it).
func teamModel() mockmodel.Config {
	tasks, _ := json.Marshal(map[string]any{"tasks": teamTasks})
	var plan strings.Builder
	plan.WriteString("# Tasks\n\n")
	for i, t := range teamTasks {
		fmt.Fprintf(&plan, "%d. %s: %s (%s)\n", i+1, t.Title, t.Detail, t.File)
	}
	scripts := map[string]mockmodel.Script{
		"plan": {
			{Text: "Planning.", Write: &mockmodel.File{Path: "work/TASKS.md", Content: plan.String()}},
			{Text: "Three tasks.\n" + string(tasks)},
		},
		// The resolver keeps both sides of each conflict: it drops the
		// markers' lines (a shell command, as the conflicts differ from
		// one merge to the next).
		"resolve": {
			{Text: "Keeping both sides.", Shell: `sed -i -E '/^(<<<<<<<|=======|>>>>>>>)( .*)?$/d' work/CHANGELOG.md`},
			{Text: "Resolved work/CHANGELOG.md."},
		},
		"review": {{Text: "Every task has its module and its tests.\n{\"verdict\": \"approve\"}"}},
	}
	phrases := []mockmodel.Phrase{
		{Text: "You are the planner.", Script: "plan"},
		{Text: "You are resolving a git merge for orch", Script: "resolve"},
		{Text: "You are the reviewer.", Script: "review"},
	}
	for _, t := range teamTasks {
		name := "implement-" + t.ID
		scripts[name] = mockmodel.Script{
			{Text: "The module.", Write: &mockmodel.File{Path: t.File, Content: t.code}},
			{Text: "Its tests.", Write: &mockmodel.File{Path: "work/test_" + t.ID + ".py", Content: t.test}},
			{Text: "The changelog.", Shell: fmt.Sprintf("printf '%%s\\n' '%s' >> work/CHANGELOG.md", t.changelogLine())},
			{Text: "Done.\n{\"summary\": \"implemented " + t.Title + "\"}"},
		}
		phrases = append(phrases, mockmodel.Phrase{Text: "Implement " + t.Title, Script: name})
	}
	return mockmodel.Config{Scripts: scripts, Phrases: phrases}
}

// exampleFiles are the example's files: the cuelist named, and work/.
func exampleFiles(t *testing.T, cuelist string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{cuelist, "work/CHANGELOG.md", "work/README.md"} {
		b, err := os.ReadFile(filepath.Join(exampleTeam, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}

// TestExampleTeam runs examples/team with the real CLIs its README points
// at (cuelist.real.yaml: claude -p plans and implements, codex exec
// resolves and reviews), in a git repository of its own: the planner's
// list fans out to three implementers in worktrees, each adding a line to
// the CHANGELOG, so merging their branches for the review conflicts twice
// and the resolver works in the merge's worktree; the tests pass on the
// merged tree; the reviewer approves; the run's result branch holds it all
// and orch land brings it into main. Then the same team over ACP, as the
// README says: claude-agent-acp for claude -p, codex-acp for codex exec.
func TestExampleTeam(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	overACP := strings.NewReplacer(
		"protocol: claude-code ", "protocol: acp\n  command: [claude-agent-acp]\n  # ",
		"protocol: claude-code\n", "protocol: acp\n  command: [claude-agent-acp]\n",
		"protocol: codex ", "protocol: acp\n  command: [codex-acp]\n  # ",
		"protocol: codex\n", "protocol: acp\n  command: [codex-acp]\n")
	for _, variant := range []string{"headless", "acp"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			w := newWorldOf(t, teamModel(), false)
			files := exampleFiles(t, "cuelist.real.yaml")
			if variant == "acp" {
				files["cuelist.real.yaml"] = overACP.Replace(files["cuelist.real.yaml"])
				for _, p := range []string{"claude-code", "codex"} {
					if strings.Contains(files["cuelist.real.yaml"], "protocol: "+p) {
						t.Fatalf("protocol: %s is left in the ACP variant:\n%s", p, files["cuelist.real.yaml"])
					}
				}
			}
			w.write(files, true)
			r := w.run("cuelist.real.yaml", 0)
			if variant == "acp" { // each implementer's session asked, the agent's permissions answered
				for _, task := range teamTasks {
					contains(t, "orch run", r.stdout, `permission for edit "Write `+task.File+`": Yes (allow-once, by the permissions policy)`)
				}
			}
			checkTeam(t, w, r.stdout)
		})
	}
}

// resolvingIn finds where orch run says the merge's resolver works.
var resolvingIn = regexp.MustCompile(`(?m) resolving: resolver team-cli-resolver \(attempt \d+\) works in (\S+)$`)

// checkTeam checks what a user checks after the team's run (its output,
// run): the fan-out's items, the merge and its resolver, the result
// branch, orch land.
func checkTeam(t *testing.T, w *world, run string) {
	t.Helper()
	s := w.status()
	if s.State != "completed" {
		t.Fatalf("the run is %s, want completed", s.State)
	}
	// The fan-out: an item per task, each completed on a branch of its own
	// holding its module and its tests.
	var wantItems []string
	for _, task := range teamTasks {
		wantItems = append(wantItems, "IMPLEMENT["+task.ID+"]")
	}
	cues := map[string]int{}
	for i, c := range s.Cues {
		cues[c.ID] = i
	}
	impl := s.Cues[cues["IMPLEMENT"]]
	if impl.State != "completed" || impl.Items == nil || impl.Items.Count != 3 || impl.Items.Completed != 3 ||
		strings.Join(impl.Items.IDs, " ") != strings.Join(wantItems, " ") {
		t.Errorf("IMPLEMENT: %s, items %+v; want completed, 3 of 3 completed: %v", impl.State, impl.Items, wantItems)
	}
	for _, task := range teamTasks {
		b := s.attemptBranch(t, "IMPLEMENT["+task.ID+"]")
		contains(t, task.File+" on "+b, w.git("show", b+":"+task.File), task.code)
		contains(t, "the CHANGELOG on "+b, w.git("show", b+":work/CHANGELOG.md"), task.changelogLine())
	}
	// REVIEW started from the merge of the three branches: its branch,
	// orch/<run>/REVIEW/merge, is a commit whose parents are the items'.
	merge := ""
	for _, wt := range s.Worktrees {
		if wt.Branch == "orch/"+s.ID+"/REVIEW/merge" {
			merge = wt.Branch
		}
	}
	if merge == "" {
		t.Fatalf("orch status lists no branch orch/%s/REVIEW/merge: %+v", s.ID, s.Worktrees)
	}
	if parents := strings.Fields(w.git("rev-list", "--parents", "-n", "1", merge)); len(parents) != 4 {
		t.Errorf("the merge's commit has parents %v, want the three items' branches", parents[1:])
	}
	// Two of the three merges conflicted in the CHANGELOG: the resolver
	// (codex) worked twice, in the merge's worktree.
	if convs := conversations(w.scripted("resolve")); convs != 2 {
		t.Errorf("the resolver was asked %d times, want 2 (the second and third branches conflict):\n%s", convs, describe(w.scripted("resolve")))
	}
	where := resolvingIn.FindAllStringSubmatch(run, -1)
	if len(where) != 2 || where[0][1] != where[1][1] {
		t.Fatalf("orch run does not say the resolver worked twice in the merge's worktree:\n%s", run)
	}
	for _, r := range w.scripted("resolve") {
		if r.Cwd != where[0][1] {
			t.Errorf("the resolver worked in %q, not in the merge's worktree %s", r.Cwd, where[0][1])
		}
	}
	review := s.Cues[cues["REVIEW"]]
	if review.State != "completed" || review.Outputs["verdict"] != "approve" {
		t.Errorf("REVIEW: %s, outputs %v; want completed with verdict approve", review.State, review.Outputs)
	}
	logs := w.orch("logs", "last", "REVIEW").stdout
	toolLine(t, logs, "sed -i")
	// The result branch: in orch status, holding every module and test,
	// and a CHANGELOG with the three lines and no marker.
	result := "orch/" + s.ID + "/result"
	if s.Result == nil || s.Result.Branch != result || s.Result.Ahead < 5 {
		t.Errorf("orch status's result: %+v, want %s, at least 5 commits ahead (plan, 3 items, the merge)", s.Result, result)
	}
	text := w.orch("status", "last").stdout
	contains(t, "orch status", text, "result: "+result, "orch/"+s.ID+"/REVIEW/merge", "3 items: 3 completed")
	tree := w.git("ls-tree", "-r", "--name-only", result)
	for _, task := range teamTasks {
		contains(t, "the result's tree", tree, task.File+"\n", "work/test_"+task.ID+".py\n")
	}
	contains(t, "the result's tree", tree, "work/TASKS.md\n")
	changelog := w.git("show", result+":work/CHANGELOG.md")
	checkChangelog(t, "the result's CHANGELOG", changelog)
	// orch land brings it into main, the branch checked out.
	land := w.orch("land", "last")
	if land.code != 0 {
		t.Fatalf("orch land last exited %d:\n%s%s", land.code, land.stdout, land.stderr)
	}
	if head, want := w.git("rev-parse", "HEAD"), w.git("rev-parse", result); head != want {
		t.Errorf("after orch land, main is at %s, want the result's %s", head, want)
	}
	for _, task := range teamTasks {
		contains(t, task.File+" in the checkout", w.file(task.File), task.code)
	}
	checkChangelog(t, "work/CHANGELOG.md in the checkout", w.file("work/CHANGELOG.md"))
	w.noneLeft()
}

var conflictMarker = regexp.MustCompile(`(?m)^(<<<<<<<|=======|>>>>>>>)`)

// checkChangelog fails unless the CHANGELOG has each task's line once and
// no conflict marker.
func checkChangelog(t *testing.T, what, changelog string) {
	t.Helper()
	for _, task := range teamTasks {
		if n := strings.Count(changelog, task.changelogLine()+"\n"); n != 1 {
			t.Errorf("%s has %s's line %d times, want once:\n%s", what, task.ID, n, changelog)
		}
	}
	if conflictMarker.MatchString(changelog) {
		t.Errorf("%s keeps conflict markers:\n%s", what, changelog)
	}
}

// conversations counts the conversations among a script's requests: each
// starts at turn 0 (a CLI may send a turn's request again).
func conversations(reqs []mockmodel.Request) int {
	n := 0
	for i, r := range reqs {
		if r.Turn == 0 && (i == 0 || reqs[i-1].Turn != 0) {
			n++
		}
	}
	return n
}

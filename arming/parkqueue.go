package arming

// parkQueue is a min-heap of parked tasks by due instant
// (container/heap); each entry knows its index.
type parkQueue []*armedTask

func (q parkQueue) Len() int           { return len(q) }
func (q parkQueue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q parkQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].parkIdx, q[j].parkIdx = i, j
}

// Push adds x (an *armedTask); use heap.Push.
func (q *parkQueue) Push(x any) {
	e := x.(*armedTask)
	e.parkIdx = len(*q)
	*q = append(*q, e)
}

// Pop removes the last entry; use heap.Pop.
func (q *parkQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.parkIdx = -1
	*q = old[:len(old)-1]
	return e
}
